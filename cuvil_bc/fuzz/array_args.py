"""Argument blocks for array programs: arrays in every layout, aliasing views, edge
elements, and the scalars `k`, `x`, `n`.

Each call is source text (see `program.Program`) such as

    a = np.asfortranarray(np.array([1, -128, 7, 0, 3, 127], dtype=np.int8).reshape((2, 3)))
    a.flags.writeable = False
    base = np.array([0.5, math.nan, -0.0, 1e308], dtype=np.float64)
    b = base[1:]
    c = base[:-1]
    args = (a, b, c, 3)

so that executing it again rebuilds equal arrays with the same strides and the same
sharing of memory, and a reproducer can print it as it is. Every argument of one
program has the extents its symbols say (all "N" extents equal in a call, and so
on), except in a few calls where one array is one longer (IndexError somewhere).
"""

from __future__ import annotations

import math
import random
from typing import Any

from .program import EDGE_FLOATS, EDGE_INTS, render_elements

LAYOUTS = ("C", "C", "F", "T", "strided", "reversed")
EDGES: dict[str, tuple[Any, ...]] = {
    "float64": EDGE_FLOATS,
    "float32": (0.0, -0.0, 1.5, -2.5, 3.4e38, -3.4e38, 1e-45, math.inf, -math.inf, math.nan, 0.1, 16777217.0),
    "int64": (2**63 - 1, -(2**63), 2**31, 2**32, -(2**53), 2**62, 3037000500),
    "int32": (2**31 - 1, -(2**31), 65536, 46341),
    "int8": (127, -128, 100, -100, 64),
    "uint8": (255, 128, 200, 16),
    "uint64": (2**64 - 1, 2**63, 2**63 - 1, 2**32),
    "bool": (True, False),
}


def element(rng: random.Random, dtype: str) -> Any:
    if dtype == "bool":
        return rng.random() < 0.5
    if rng.random() < 0.25:
        return rng.choice(EDGES[dtype])
    if dtype.startswith("float"):
        return rng.choice([round(rng.uniform(-10, 10), 2), float(rng.randint(-5, 5)), rng.uniform(-1, 1)])
    return rng.randint(0, 10) if dtype.startswith("uint") else rng.randint(-10, 10)


def _array(rng: random.Random, name: str, dtype: str, shape: tuple[int, ...], layout: str) -> list[str]:
    """Lines binding `name` to an array of `shape` in `layout`."""
    size = math.prod(shape)
    ctor = "np.bool_" if dtype == "bool" else f"np.{dtype}"
    if layout == "strided":  # every other row of an array twice as long
        values = [element(rng, dtype) for _ in range(2 * size)]
        big = (2 * shape[0],) + shape[1:]
        return [f"{name} = np.array({render_elements(values, dtype)}, dtype={ctor}).reshape({big})[::2]"]
    values = [element(rng, dtype) for _ in range(size)]
    made = f"np.array({render_elements(values, dtype)}, dtype={ctor})"
    if layout == "F":
        return [f"{name} = np.asfortranarray({made}.reshape({shape}))"]
    if layout == "T":
        return [f"{name} = {made}.reshape({tuple(reversed(shape))}).T"]
    if layout == "reversed":
        return [f"{name} = {made}.reshape({shape})[::-1]"]
    return [f"{name} = {made}.reshape({shape})"]


def _aliases(rng: random.Random, first: str, second: str, dtype: str, shape: tuple[int, ...]) -> list[str]:
    """Two views of one base array, passed as two arguments."""
    ctor = "np.bool_" if dtype == "bool" else f"np.{dtype}"
    if len(shape) == 1:
        n = shape[0]
        values = [element(rng, dtype) for _ in range(n + 1)]
        lines = [f"base = np.array({render_elements(values, dtype)}, dtype={ctor})"]
        how = rng.choice(["shifted", "same", "reversed"])
        if how == "shifted":  # overlapping, one element apart
            return lines + [f"{first} = base[1:]", f"{second} = base[:-1]"]
        lines.append(f"{first} = base[:{n}]")
        return lines + [f"{second} = {first}" if how == "same" else f"{second} = {first}[::-1]"]
    values = [element(rng, dtype) for _ in range(math.prod(shape))]
    lines = [f"{first} = np.array({render_elements(values, dtype)}, dtype={ctor}).reshape({shape})"]
    options = ["same", "reversed"] + (["transposed"] if len(shape) == 2 and shape[0] == shape[1] else [])
    how = rng.choice(options)
    return lines + [{"same": f"{second} = {first}", "reversed": f"{second} = {first}[::-1]", "transposed": f"{second} = {first}.T"}[how]]


def _scalar(rng: random.Random, name: str) -> str:
    from .program import render

    if name == "k":
        return render(rng.choice(EDGE_INTS) if rng.random() < 0.6 else rng.randint(-10, 10))
    if name == "x":
        return render(rng.choice(EDGE_FLOATS) if rng.random() < 0.6 else round(rng.uniform(-10, 10), 3))
    return str(rng.choice([0, 1, 2, 2, 3, 3, 4, 5]) if rng.random() < 0.95 else rng.choice([-1, 7]))


def array_calls(rng: random.Random, arrays: list[tuple[str, str, int, bool]], scalars: list[str]) -> list[str]:
    """Call blocks for arrays given as (name, dtype, ndim, may be read-only)."""
    # Each array keeps one layout in most calls (every layout is its own specialisation).
    usual = {name: rng.choice(LAYOUTS) for name, _, _, _ in arrays}
    readonly = {name: ro and rng.random() < 0.6 for name, _, _, ro in arrays}
    calls = []
    for _ in range(rng.randint(3, 5)):
        ext = {"N": rng.choice([0, 1, 2, 3, 3, 4, 4, 5]), "M": rng.choice([1, 2, 3, 3, 0]), "K": rng.choice([1, 2, 3])}
        lines: list[str] = []
        done: set[str] = set()
        pairs = [(p, q) for p in arrays for q in arrays if p[0] < q[0] and p[1] == q[1] and p[2] == q[2]]
        if pairs and rng.random() < 0.3:
            (p, dtype, ndim, _), (q, _, _, _) = rng.choice(pairs)
            if not (readonly[p] or readonly[q]):
                shape = tuple(ext[e] for e in "NMK"[:ndim])
                lines += _aliases(rng, p, q, dtype, shape)
                done |= {p, q}
        mismatch = rng.choice([a[0] for a in arrays]) if rng.random() < 0.08 else None
        for name, dtype, ndim, _ in arrays:
            if name in done:
                continue
            shape = tuple(ext[e] + (1 if name == mismatch and i == 0 else 0) for i, e in enumerate("NMK"[:ndim]))
            layout = usual[name] if rng.random() < 0.75 else rng.choice(LAYOUTS)
            lines += _array(rng, name, dtype, shape, layout)
            if readonly[name] and rng.random() < 0.8:
                lines.append(f"{name}.flags.writeable = False")
        names = [a[0] for a in arrays] + [f"{_scalar(rng, s)}" for s in scalars]
        lines.append(f"args = ({', '.join(names)},)")
        calls.append("\n".join(lines))
    return calls
