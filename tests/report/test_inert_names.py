"""Names are inert everywhere (issue 25 item 6).

A config or entry.yaml can no longer give a name with control characters
(tests/config/test_names.py); a run stored before that rule, or a stored
detail, still may: every terminal line that shows an entry's name or text
escapes it (``runner.domain.inert``): `tourney matches`, `tourney standings`,
the end-of-run summary (standings, verdicts, warnings, final ranking) and the
progress lines.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from runner.cli import main
from runner.commands import report as commands
from runner.domain.wire import LiveMatch
from runner.report.model import ReportData
from runner.report.progress import ProgressSnapshot, RunProgress, StageProgress
from runner.report.terminal import print_summary
from tests.report import synth

EVIL = "evil\x1b]0;PWNED\x07\x1b[2J"
SHOWN = "evil\\x1b]0;PWNED\\x07\\x1b[2J"


def _raw_controls(text: str) -> list[str]:
    return sorted({c for c in text if c in "\x1b\x07\x9b\r"})


@pytest.fixture(scope="module")
def evil_data() -> ReportData:
    """The synthetic pousse tournament with one entrant renamed as a pre-rule run could hold."""
    return synth.pousse_tournament(entries=[EVIL, *synth.POUSSE_ENTRIES[1:]])


def test_the_summary_escapes_names_in_every_section(evil_data: ReportData) -> None:
    console = Console(width=220, record=True, color_system=None, file=io.StringIO())
    print_summary(evil_data, console)
    text = console.export_text()
    assert _raw_controls(text) == [] and SHOWN in text


def test_matches_and_standings_escape_names(
    evil_data: ReportData, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(commands, "load_report_data", lambda run_dir: evil_data)
    for argv in (["matches", "RUN"], ["standings", "RUN"]):
        assert main(argv) == 0
        out = capsys.readouterr()
        assert _raw_controls(out.out + out.err) == [], argv
        assert SHOWN in out.out, argv


def _snapshot() -> ProgressSnapshot:
    live = LiveMatch("m1", 1, EVIL, (EVIL, "bob"), 2, "building", building=(EVIL,))
    stages = [StageProgress(EVIL, 1, 2, "running")]
    return ProgressSnapshot(stages, 2, 80, 1.0, {"crash": 1}, 1, 1, live=(live,), quarantined=(EVIL,))


def test_progress_lines_and_warnings_are_inert() -> None:
    out = io.StringIO()
    with RunProgress(EVIL, "plain", out=out, plain_interval_s=0.0) as p:
        p.update(_snapshot())
        p.log(f"warning: {EVIL} wrote on stderr: {EVIL}")
    text = out.getvalue()
    assert _raw_controls(text) == [] and SHOWN in text


def test_the_live_display_is_inert() -> None:
    file = io.StringIO()
    console = Console(width=220, file=file, force_terminal=True, color_system=None)
    with RunProgress(EVIL, "live", console=console) as p:
        p.update(_snapshot())
        p.log(f"warning: {EVIL}")
    text = file.getvalue()
    assert SHOWN in text
    # the console writes its own cursor sequences (ESC [ ...): none of the entry's gets through
    assert "\x1b]0;PWNED" not in text and "\x07" not in text and "\x1b[2J" not in text
