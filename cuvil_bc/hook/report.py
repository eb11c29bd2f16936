"""What the hook did, per counted function: a JSON file at exit (CUVIL_BC_REPORT) and
the table of ``python -m cuvil_bc report``.

    {"functions": [{"module", "qualname", "status", "reason", "calls_native",
                    "calls_interpreted", "compile_ms"}, ...]}

status is ``native`` (compiled; its calls run native code), ``interpreted`` (never got
hot) or ``unsupported`` (not compilable; `reason` says why). Calls are counted by the
hook's counters, which a function loses once the hook has decided about it: an
unsupported function's calls_interpreted are those made until then.
"""

from __future__ import annotations

import atexit
import json
import os
from typing import Any, TextIO

from .hot import RUNTIME

_registered: set[str] = set()


def collect() -> dict[str, Any]:
    rows = RUNTIME.rows()
    rows.sort(key=lambda r: (-(r["calls_native"] + r["calls_interpreted"]), r["module"], r["qualname"]))
    return {"functions": rows}


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


def table(data: dict[str, Any], out: TextIO, limit: int | None = None) -> None:
    """A readable table: hottest first, with the reason for each fallback."""
    rows = data["functions"]
    header = ("status", "calls native", "calls interp.", "compile ms", "function", "reason")
    lines = [header]
    for r in rows[:limit]:
        lines.append(
            (
                r["status"],
                str(r["calls_native"]),
                str(r["calls_interpreted"]),
                f"{r['compile_ms']:.1f}" if r["compile_ms"] else "",
                f"{r['module']}.{r['qualname']}",
                r["reason"],
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(5)]
    for k, line in enumerate(lines):
        cells = [line[0].ljust(widths[0])] + [line[i].rjust(widths[i]) for i in (1, 2, 3)] + [line[4].ljust(widths[4]), line[5]]
        out.write("  ".join(cells).rstrip() + "\n")
        if k == 0:
            out.write("  ".join("-" * w for w in widths) + "  ------\n")
