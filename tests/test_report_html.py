"""The hook's report as HTML (``python -m cuvil_bc report --html``, hook/htmlview.py):
the program's sources with hot lines coloured by what ran them, and the reason on an
unsupported construct's line. Checked as parsed by Python, and as rendered by a real
headless Chromium where one is installed (.ci/run installs Debian's)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .test_hook_e2e import PROGRAMS, run


class _Rows(HTMLParser):
    """line number -> (class, note text) of the source rows."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[int, tuple[str, str]] = {}
        self._line: int | None = None
        self._in_note = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("data-line"):
            self._line = int(a["data-line"] or 0)
            self.rows[self._line] = ((a.get("class") or "").replace("line", "").strip(), "")
        elif tag == "td" and a.get("class") == "note":
            self._in_note = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_note = False

    def handle_data(self, data: str) -> None:
        if self._in_note and self._line is not None:
            kind, note = self.rows[self._line]
            self.rows[self._line] = (kind, note + data)


def _rows(text: str) -> dict[int, tuple[str, str]]:
    parser = _Rows()
    parser.feed(text)
    return parser.rows


def _check(rows: dict[int, tuple[str, str]]) -> None:
    # mixed.py: numeric (lines 4-8) runs natively; uses_dict's dict display (line 12)
    # is what stops it compiling.
    assert [rows[n][0] for n in range(4, 9)] == ["native"] * 5, rows
    assert "numeric: native" in rows[4][1], rows[4]
    assert rows[12] == ("unsupported", "unsupported: dict"), rows[12]
    assert rows[2][0] == "" and rows[26][0] == ""  # not in a hot function


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "mixed.html"
    done = run(["-m", "cuvil_bc", "report", "--html", str(out), "mixed.py"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == run(["mixed.py"]).stdout
    assert f"are in {out}" in done.stderr
    return out


def test_the_html_report_colours_lines_by_what_ran_them(report_html: Path) -> None:
    _check(_rows(report_html.read_text(encoding="utf-8")))


def test_the_html_report_from_a_json_report(tmp_path: Path) -> None:
    data = tmp_path / "report.json"
    done = run(["-X", "importhook", "cuvil_bc", "mixed.py"], env={"CUVIL_BC_REPORT": str(data)})
    assert done.returncode == 0, done.stderr
    assert json.loads(data.read_text())["program_dir"] == str(PROGRAMS)
    out = tmp_path / "from.html"
    done = subprocess.run([sys.executable, "-m", "cuvil_bc", "report", "--html", str(out), "--from", str(data)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    _check(_rows(out.read_text(encoding="utf-8")))
    done = subprocess.run([sys.executable, "-m", "cuvil_bc", "report", "--html", str(out), "--from", str(tmp_path / "nothing.json")], capture_output=True, text=True)
    assert done.returncode == 2 and "cannot read" in done.stderr


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.skipif(_chromium() is None, reason="no Chromium installed (.ci/run installs Debian's chromium)")
def test_the_html_report_renders_in_headless_chromium(report_html: Path, tmp_path: Path) -> None:
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]  # fmt: skip
    url = report_html.as_uri()
    env = {**os.environ, "HOME": str(tmp_path)}
    dom = subprocess.run([_chromium(), *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120, env=env)
    assert dom.returncode == 0, dom.stderr[-2000:]
    _check(_rows(dom.stdout))  # the DOM as the browser built it
    shot = tmp_path / "shot.png"
    done = subprocess.run([_chromium(), *flags, f"--screenshot={shot}", "--window-size=1000,800", url], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and shot.stat().st_size > 10_000, done.stderr[-2000:]
