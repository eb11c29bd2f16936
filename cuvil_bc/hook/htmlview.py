"""The report as HTML (``python -m cuvil_bc report --html out.html``): the program's
sources, with each counted function's lines coloured by what ran them, like
``cython -a``. One self-contained page, no scripts.

* native: the function ran natively (its header says how often, and the estimated
  time saved);
* deoptimised: native code handed calls back to CPython at this line (counted);
* interpreted: the function got hot but runs interpreted (unsupported, reverted by the
  cost model, called once, a loop-free leaf, still compiling);
* unsupported: the line of the construct that stops the function from compiling,
  with the reason.

Functions that never got hot are not coloured; those the hook never counted
(generators, closures, ...) still show their reason on their first line.
"""

from __future__ import annotations

import ast
import html
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<what>.+)$", re.S)

STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table.source { border-collapse: collapse; font-family: monospace; font-size: 13px; }
table.source td { padding: 0 0.6em; vertical-align: top; white-space: pre; }
td.no { color: #888; text-align: right; user-select: none; }
td.note { font-family: sans-serif; font-size: 12px; color: #333; white-space: normal; }
tr.native { background: #d8f5d8; }
tr.deopt { background: #ffd9a8; }
tr.interpreted { background: #e8e8f0; }
tr.unsupported { background: #ffc8c8; }
span.key { display: inline-block; padding: 0 0.5em; margin-right: 0.5em; }
"""


def _extents(source: str) -> dict[int, int]:
    """First line -> last line of every function in `source` (by its ``def`` line and
    by its first decorator's, which is where its code object starts)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[int, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = node.end_lineno or node.lineno
            out[node.lineno] = end
            for deco in node.decorator_list:
                out.setdefault(deco.lineno, end)
    return out


def _hot(row: dict[str, Any]) -> bool:
    return row["status"] == "native" or (row["calls_interpreted"] > 0 and not row["reason"].startswith("not hot"))


def _summary(row: dict[str, Any]) -> str:
    parts = [f"{row['qualname']}: {row['status']}"]
    if row["reason"]:
        parts.append(row["reason"])
    parts.append(f"{row['calls_native']} native calls, {row['calls_interpreted']} interpreted")
    if row.get("saved_ms") is not None:
        parts.append(f"about {row['saved_ms']:.1f} ms saved")
    return "; ".join(parts)


def _file_lines(rows: list[dict[str, Any]], source: str) -> tuple[dict[int, str], dict[int, list[str]]]:
    """Each line's class and notes for one file's functions."""
    extents = _extents(source)
    classes: dict[int, str] = {}
    notes: dict[int, list[str]] = {}
    for row in rows:
        first = int(row["line"])
        last = extents.get(first, first)
        notes.setdefault(first, []).append(_summary(row))
        if _hot(row):
            kind = "native" if row["status"] == "native" else "interpreted"
            for line in range(first, last + 1):
                classes.setdefault(line, kind)
        for line, count in (row.get("deopt_lines") or {}).items():
            if int(line):
                classes[int(line)] = "deopt"
                notes.setdefault(int(line), []).append(f"{count} deoptimisation{'s' if count != 1 else ''} here")
        located = _LOCATED.match(row["reason"]) if row["status"] == "unsupported" else None
        if located and first <= int(located["line"]) <= last:
            line = int(located["line"])
            classes[line] = "unsupported"
            notes.setdefault(line, []).append(f"unsupported: {located['what']}")
    return classes, notes


def render(data: dict[str, Any], base: str) -> str:
    by_file: dict[str, list[dict[str, Any]]] = {}
    for row in data["functions"]:
        if row.get("file"):
            by_file.setdefault(row["file"], []).append(row)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>cuvil_bc report</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>cuvil_bc report</h1>",
        '<p class="legend">'
        + "".join(f'<span class="key {k}" style="background: {c}">{k}</span>' for k, c in (("native", "#d8f5d8"), ("deopt", "#ffd9a8"), ("interpreted", "#e8e8f0"), ("unsupported", "#ffc8c8")))
        + "</p>",
        "<p>Calls are counted from interpreted code only: calls between native functions are not counted. "
        "Time saved is estimated by the cost model, where it timed calls both ways.</p>",
    ]
    for name in sorted(by_file):
        path = name if os.path.isabs(name) else os.path.join(base, name)
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except (OSError, UnicodeDecodeError) as e:
            out.append(f'<section class="file"><h2>{html.escape(name)}</h2><p>source not readable: {html.escape(str(e))}</p></section>')
            continue
        classes, notes = _file_lines(by_file[name], source)
        out.append(f'<section class="file" data-file="{html.escape(name, quote=True)}"><h2>{html.escape(name)}</h2><table class="source">')
        for number, text in enumerate(source.splitlines(), 1):
            kind = classes.get(number, "")
            note = "<br>".join(html.escape(n) for n in notes.get(number, []))
            out.append(
                f'<tr class="line {kind}" data-line="{number}"><td class="no">{number}</td>'
                f'<td class="code">{html.escape(text) or " "}</td><td class="note">{note}</td></tr>'
            )
        out.append("</table></section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
