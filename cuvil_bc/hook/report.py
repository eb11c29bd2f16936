"""What the hook did, per counted function: a JSON file at exit (CUVIL_BC_REPORT), the
table of ``python -m cuvil_bc report`` and its ``--html`` view.

    {"functions": [{"module", "qualname", "file", "line", "status", "reason",
                    "calls_native", "calls_interpreted", "compile_ms",
                    "calls_before_native", "native_ns", "interpreted_ns", "saved_ms",
                    "deopt_lines", "signatures"}, ...]}

status is ``native`` (compiled; its calls run native code), ``interpreted`` (not hot,
still compiling when the program ended, called once, a leaf, or reverted by the cost
model: `reason` says which) or ``unsupported`` (not compilable; `reason` says why, as
``file:line: construct``). Paths inside the program's directory are relative to it.
Calls are counted by the hook's counters, which a function loses once the hook has
decided about it (an unsupported function's calls_interpreted are those made until
then), and by the native entry; calls that native code makes to other native code are
not counted. native_ns and interpreted_ns are the cost model's typical call times
(hook/cost.py); saved_ms is (interpreted_ns - native_ns) x calls_native, None when
interpreted calls were not timed. deopt_lines: deoptimisations by source line.
signatures: the argument types each native signature was compiled for (``"(float, int)"``),
which ``python -m cuvil_bc compile --signatures-from`` compiles ahead of time.
"""

from __future__ import annotations

import atexit
import json
import os

from .hot import RUNTIME

TYPE_CHECKING = False  # (typing costs ~3 ms to import: a warm run does without it)
if TYPE_CHECKING:
    from typing import Any, TextIO

_registered: set[str] = set()


def collect() -> dict[str, Any]:
    rows = RUNTIME.rows()
    rows.sort(key=lambda r: (-(r["calls_native"] + r["calls_interpreted"]), r["module"], r["qualname"]))
    return {"program_dir": os.path.abspath(RUNTIME.program_dir or os.getcwd()), "functions": rows}


def write_html(data: dict[str, Any], path: str) -> None:
    """`html` of `data` into `path` (relative paths in `data` are relative to its
    ``program_dir``)."""
    text = html(data, data.get("program_dir") or os.getcwd())
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def write(path: str) -> None:
    data = collect()
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def write_at_exit(path: str) -> None:
    if path in _registered:
        return
    _registered.add(path)

    def _write() -> None:
        try:
            write(path)
        except Exception as e:  # noqa: BLE001
            RUNTIME.warn(f"could not write the report {path}: {e}")

    atexit.register(_write)


NOTE = (
    "calls: from interpreted code only (calls between native functions are not counted); "
    "saved: estimated, (interpreted - native time a call) x native calls, where the cost model timed both"
)


def table(data: dict[str, Any], out: TextIO, limit: int | None = None) -> None:
    """A readable table: hottest first, with the reason for each fallback."""
    rows = data["functions"]
    header = ("status", "calls native", "calls interp.", "compile ms", "saved ms", "function", "reason")
    lines = [header]
    for r in rows[:limit]:
        saved = r.get("saved_ms")
        lines.append(
            (
                r["status"],
                str(r["calls_native"]),
                str(r["calls_interpreted"]),
                f"{r['compile_ms']:.1f}" if r["compile_ms"] else "",
                f"{saved:.1f}" if saved is not None else "",
                f"{r['module']}.{r['qualname']}",
                r["reason"],
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(6)]
    for k, line in enumerate(lines):
        cells = [line[0].ljust(widths[0])] + [line[i].rjust(widths[i]) for i in (1, 2, 3, 4)] + [line[5].ljust(widths[5]), line[6]]
        out.write("  ".join(cells).rstrip() + "\n")
        if k == 0:
            out.write("  ".join("-" * w for w in widths) + "  ------\n")
    out.write(f"({NOTE})\n")


def html(data: dict[str, Any], base: str) -> str:
    """The program's sources as HTML, like ``cython -a``: each counted function's lines
    coloured by what ran them (native, interpreted, or native with deoptimisations on
    that line, counted), its status and reason above it, and the reason of an
    unsupported construct on its line. `base`: the directory that relative paths in
    `data` are relative to."""
    from .htmlview import render

    return render(data, base)
