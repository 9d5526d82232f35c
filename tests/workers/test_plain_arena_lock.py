"""``sandbox: none`` and POTM's ``/tmp/arena.<MARK>``: two games with one mark
never run at once on a machine (the second waits), so neither wipes the
other's state; other protocols are not held up."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from workers.sandbox.plain import PlainHost

ROOT = Path(__file__).resolve().parents[2]
POTM_ENTRY = ROOT / "tests" / "sandbox" / "fixtures" / "steady"
MNK_ENTRY = ROOT / "tests" / "fixtures" / "mnk" / "first_empty"


def _open_in_thread(entry: Path, mark: str, opened: list[PlainHost]) -> threading.Thread:
    t = threading.Thread(target=lambda: opened.append(PlainHost(entry, mark)), daemon=True)
    t.start()
    return t


@pytest.mark.usefixtures("real_tmp_arena")
def test_second_potm_game_with_the_same_mark_waits_for_the_first() -> None:
    first = PlainHost(POTM_ENTRY, "Q")
    arena = Path("/tmp/arena.Q")
    try:
        arena.write_text("the first game's state")
        opened: list[PlainHost] = []
        t = _open_in_thread(POTM_ENTRY, "Q", opened)
        t.join(0.5)
        assert t.is_alive() and not opened  # waiting, not wiping
        assert arena.read_text() == "the first game's state"
    finally:
        first.close()
    t.join(10)
    assert len(opened) == 1
    opened[0].close()


def test_other_marks_and_protocols_do_not_wait() -> None:
    first = PlainHost(POTM_ENTRY, "Q")
    try:
        opened: list[PlainHost] = []
        threads = [_open_in_thread(POTM_ENTRY, "R", opened), _open_in_thread(MNK_ENTRY, "Q", opened)]
        deadline = time.monotonic() + 10
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        assert len(opened) == 2
        for h in opened:
            h.close()
    finally:
        first.close()
