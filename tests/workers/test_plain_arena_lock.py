"""``sandbox: none`` and POTM's ``/tmp/arena.<MARK>``: the potm-arena protocol holds
the machine's file for its game (``workers.protocols.arena_lock``), so two games with
one mark never run at once on a machine (the second waits) and neither wipes the
other's state; the host knows nothing of it, and other protocols are not held up."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from runner.domain.games import get_game
from runner.domain.match_values import Limits
from workers.protocols import EntryProtocol, Seat, make_protocol
from workers.protocols.arena_lock import ArenaHold
from workers.sandbox.base import EntryHost
from workers.sandbox.plain import PlainHost, PlainHostFactory

from .conftest import EASY

ROOT = Path(__file__).resolve().parents[2]
POTM_ENTRY = ROOT / "tests" / "sandbox" / "fixtures" / "steady"
MNK_ENTRY = ROOT / "tests" / "fixtures" / "mnk" / "first_empty"
BOXING = get_game("boxing")
ARENA = "----\n"


class _Seat:
    """One potm-arena seat of a game on a plain host: its protocol begun, as ``workers.match`` does."""

    def __init__(self, mark: str, host: EntryHost | None = None) -> None:
        self.host = host if host is not None else PlainHost(POTM_ENTRY)
        self.proto: EntryProtocol = make_protocol(
            "potm-arena",
            BOXING,
            self.host,
            ["python3", "main.py", mark],
            Seat("steady", 0, mark),
            EASY,
            ARENA,
        )
        self.proto.begin(BOXING.new_game(ARENA, 2))

    def close(self) -> None:
        self.host.close()
        self.proto.close()


def _begin_in_thread(mark: str, begun: list[_Seat]) -> threading.Thread:
    t = threading.Thread(target=lambda: begun.append(_Seat(mark)), daemon=True)
    t.start()
    return t


@pytest.mark.usefixtures("real_tmp_arena")
def test_second_potm_game_with_the_same_mark_waits_for_the_first() -> None:
    first = _Seat("Q")
    arena = Path("/tmp/arena.Q")
    try:
        arena.write_text("the first game's state")
        begun: list[_Seat] = []
        t = _begin_in_thread("Q", begun)
        t.join(0.5)
        assert t.is_alive() and not begun  # waiting, not wiping
        assert arena.read_text() == "the first game's state"
    finally:
        first.close()
    t.join(10)
    assert len(begun) == 1
    begun[0].close()


def test_other_marks_and_protocols_do_not_wait() -> None:
    first = _Seat("Q")
    try:
        begun: list[_Seat] = []
        opened: list[PlainHost] = []
        threads = [
            _begin_in_thread("R", begun),
            threading.Thread(target=lambda: opened.append(PlainHost(MNK_ENTRY)), daemon=True),
        ]
        threads[1].start()
        deadline = time.monotonic() + 10
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        assert len(begun) == 1 and len(opened) == 1
        begun[0].close()
        opened[0].close()
    finally:
        first.close()


@pytest.mark.usefixtures("real_tmp_arena")
def test_a_potm_game_starts_and_ends_without_an_arena_file() -> None:
    arena = Path("/tmp/arena.Q")
    arena.write_text("stale state from some earlier game")
    seat = _Seat("Q")
    try:
        assert not arena.exists()  # a new game starts without the last game's state
        arena.write_text("this game's state")
    finally:
        seat.close()
    seat.proto.close()  # idempotent
    assert not arena.exists()


@pytest.mark.usefixtures("real_tmp_arena")
def test_a_plain_host_leaves_the_arena_file_to_the_protocol() -> None:
    """Only a potm-arena game holding the arena's lock may delete /tmp/arena.<MARK>: a
    host opened and closed with mark Q (any protocol's) leaves that game's state alone.

    The test is that game: it holds the arena's lock while the file is its state, so that
    no real game with mark Q (another test's, or another checkout's suite on this machine)
    begins or ends meanwhile and rightly deletes it (it once did, under a parallel run)."""
    arena = Path("/tmp/arena.Q")
    hold = ArenaHold.take("Q")
    assert hold is not None
    try:
        arena.write_text("a potm game's state")
        with PlainHostFactory().open(POTM_ENTRY, Limits(), "Q"):
            assert arena.read_text() == "a potm game's state"
        assert arena.read_text() == "a potm game's state"
    finally:
        hold.release()


def test_a_host_with_its_own_tmp_takes_no_arena_lock() -> None:
    """A game whose host's ``/tmp`` is its own (the bubblewrap sandbox) neither waits for
    nor holds the machine's arena lock: it cannot see the machine's file."""
    first = _Seat("Q")
    try:
        own_tmp = PlainHost(POTM_ENTRY)
        own_tmp.shares_machine_tmp = False
        begun: list[_Seat] = []
        t = threading.Thread(target=lambda: begun.append(_Seat("Q", own_tmp)), daemon=True)
        t.start()
        t.join(10)
        assert len(begun) == 1  # did not wait for the first game's lock
        begun[0].close()
    finally:
        first.close()
