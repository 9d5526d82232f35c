"""Each protocol against real processes: legal play, and every way an entry can fail."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from runner.domain.games import get_game
from runner.domain.match_values import Limits, VerdictKind
from workers.artifacts import ArtifactCache, local_fetch
from workers.protocols import (
    GomocupProtocol,
    Icfp98Protocol,
    MnkProtocol,
    PotmArenaProtocol,
    Seat,
    make_protocol,
    protocol_class,
)

from .conftest import EASY, fixture, play, processes_running, ref

ARENA = "----\n----\n"  # 4x2: a few moves, so games are quick


def test_registry_names_every_protocol() -> None:
    assert protocol_class("potm-arena") is PotmArenaProtocol
    assert protocol_class("icfp98") is Icfp98Protocol
    assert protocol_class("mnk") is MnkProtocol
    assert protocol_class("gomocup") is GomocupProtocol
    with pytest.raises(KeyError, match="unknown protocol 'telnet'"):
        protocol_class("telnet")


def test_a_protocol_refuses_a_game_it_cannot_carry(cache: ArtifactCache) -> None:
    game = get_game("pousse")
    with pytest.raises(ValueError, match="cannot play 'pousse'"):
        make_protocol("mnk", game, None, [], Seat("x", 0, "X"), EASY, "6")  # type: ignore[arg-type]


# -- potm-arena -------------------------------------------------------------


def test_potm_arena_legal_play_to_the_end(cache: ArtifactCache) -> None:
    result = play(cache, "boxing", ARENA, ["boxing/first_fit", "boxing/native"])
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.NORMAL
    assert [m.move for m in g.moves] == [f"{x} {y} 1" for y in (1, 2) for x in (1, 2, 3, 4)]
    assert [m.player for m in g.moves] == ["first-fit", "native"] * 4
    assert g.winner == "native" and g.scores == {"first-fit": 0, "native": 4}


@pytest.mark.parametrize(
    ("entry", "kind", "detail"),
    [
        ("boxing/bad_box", VerdictKind.ILLEGAL_MOVE, "not a square"),
        ("boxing/garbage", VerdictKind.BAD_OUTPUT, "expected 10 bytes"),
        ("boxing/silent", VerdictKind.NO_OUTPUT, "no arena"),
        ("boxing/exit3", VerdictKind.CRASH, "exit code 3"),
        ("boxing/segv", VerdictKind.CRASH, "signal 11"),
    ],
)
def test_potm_arena_failures_are_charged_to_the_entry(
    cache: ArtifactCache, entry: str, kind: VerdictKind, detail: str
) -> None:
    result = play(cache, "boxing", ARENA, ["boxing/first_fit", entry])
    (g,) = result.games
    bad = ref(entry).name
    assert g.verdict.kind is kind and g.verdict.player == bad, g.verdict
    assert detail in g.verdict.detail and "\n" not in g.verdict.detail
    assert g.winner == "first-fit"
    assert [m.player for m in g.moves] == ["first-fit"]  # the failed answer is not a move


def test_timeout_is_charged_promptly(cache: ArtifactCache) -> None:
    started = time.monotonic()
    result = play(
        cache, "boxing", ARENA, ["boxing/sleeper", "boxing/first_fit"], limits=Limits(move_wall_s=0.3)
    )
    assert time.monotonic() - started < 5
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.player) == (VerdictKind.TIMEOUT, "sleeper")
    assert g.winner == "first-fit" and g.moves == []


def test_a_leftover_child_is_left_processes_and_does_not_survive(cache: ArtifactCache) -> None:
    result = play(cache, "boxing", ARENA, [("boxing/forker", ["41.25"]), "boxing/first_fit"])
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.player) == (VerdictKind.LEFT_PROCESSES, "forker")
    assert processes_running("sleep", "41.25") == []


@pytest.mark.usefixtures("real_tmp_arena")
def test_arena_file_persists_within_a_game_and_not_across_games(cache: ArtifactCache) -> None:
    """Seed 002 rule 5: /tmp/arena.MARK lives for one game. Mark Q: boxing games on
    this machine (plain hosts share the real /tmp) use A, B, ... and would interfere."""
    r = ref("boxing/memory")
    built = cache.ensure(r, local_fetch({r.digest: fixture("boxing/memory")}))
    assert isinstance(built, Path)
    stale = Path("/tmp/arena.Q")
    stale.write_text("99")  # state from "an earlier game": the entry must not see it
    game = get_game("boxing")
    try:
        for _game in range(2):
            host = cache.hosts.open(built, EASY, "Q")
            # the protocol holds the arena file for its game (workers.protocols.arena_lock)
            proto = make_protocol("potm-arena", game, host, [], Seat("memory", 0, "Q"), EASY, "----\n")
            try:
                proto.begin(game.new_game("----\n", 2))
                arena = "----\n"
                for _move in range(3):
                    # memory exits 4 unless its file counts exactly its moves in this game
                    out = host.run(["python3", "main.py", "Q"], arena.encode(), EASY)
                    assert out.failure is None, (out.detail, out.stderr_tail)
                    arena = out.stdout.decode()
                assert arena == "QQQ-\n"
            finally:
                host.close()
                proto.close()
            if cache.hosts.name == "none":  # the plain host shares the real /tmp: the protocol cleans it
                assert not stale.exists()
    finally:
        stale.unlink(missing_ok=True)


# -- icfp98 ------------------------------------------------------------------


def test_icfp98_plays_with_private_support_state_per_game(cache: ArtifactCache) -> None:
    # support_state exits 5 if support/count is not its own move count in this game
    result = play(
        cache,
        "pousse",
        "4",
        ["pousse/support_state", "pousse/t1"],
        orders=[["support-state", "t1"], ["t1", "support-state"]],
    )
    for g in result.games:
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
        assert g.winner in ("support-state", "t1") and len(g.moves) >= 2
    assert not list((fixture("pousse/support_state")).glob("support"))  # the entry itself is untouched


def test_icfp98_stdin_is_the_size_then_the_moves(cache: ArtifactCache, tmp_path: Path) -> None:
    d = tmp_path / "echo"
    d.mkdir()
    (d / "entry.yaml").write_text("name: echo\ngame: pousse\nprotocol: icfp98\nrun: [./runme]\n")
    # answers T1 and keeps what it read, in its working copy (gone after the game) and on stderr
    (d / "runme").write_text("#!/bin/sh\ncat > seen\ncat seen >&2\necho T1\n")
    (d / "runme").chmod(0o755)
    r = ref(d)
    built = cache.ensure(r, local_fetch({r.digest: d}))
    assert isinstance(built, Path)
    game = get_game("pousse")
    state = game.new_game("5", 2)
    moves = [game.parse_move("L2"), game.parse_move("T3")]
    for m in moves:
        state = game.play(state, m)
    with cache.hosts.open(built, EASY, "X") as host:
        proto = make_protocol("icfp98", game, host, ["./runme"], Seat("echo", 0, "X"), EASY, "5")
        reply = proto.request_move(state, moves)
        assert reply.verdict is None and game.format_move(reply.move) == "T1"
        assert (host.workdir / "seen").read_text() == "5\nL2\nT3\n"


def answer_with(
    cache: ArtifactCache, tmp_path: Path, game_name: str, protocol: str, board: str, out: str
) -> Any:
    """The reply of a real per-move entry, in the cache's real host, that prints ``out``."""
    d = tmp_path / "says"
    d.mkdir(parents=True)
    (d / "entry.yaml").write_text(f"name: says\ngame: {game_name}\nprotocol: {protocol}\nrun: [./runme]\n")
    (d / "runme").write_text(f"#!/bin/sh\ncat > /dev/null\nprintf '{out}'\n")
    (d / "runme").chmod(0o755)
    r = ref(d)
    built = cache.ensure(r, local_fetch({r.digest: d}))
    assert isinstance(built, Path)
    game = get_game(game_name)
    with cache.hosts.open(built, EASY, "X") as host:
        proto = make_protocol(protocol, game, host, ["./runme"], Seat("says", 0, "X"), EASY, board)
        return game, proto.request_move(game.new_game(board, 2), [])


def test_icfp98_refuses_a_second_line_and_ignores_blank_ones(cache: ArtifactCache, tmp_path: Path) -> None:
    """Seed 003: "The program's sole output, on standard output, is a single line" (docs/config.md,
    readings): a second line with anything on it is bad_output; blank lines say nothing."""
    game, reply = answer_with(cache, tmp_path / "two", "pousse", "icfp98", "5", "T1\\nthinking: 3 plies\\n")
    assert reply.move is None and reply.verdict is not None
    assert (reply.verdict.kind, reply.verdict.player) == (VerdictKind.BAD_OUTPUT, "says")
    assert "printed 2 lines, line 2: 'thinking: 3 plies'" in reply.verdict.detail
    assert "sole output, on standard output, is a single line" in reply.verdict.detail
    game, reply = answer_with(cache, tmp_path / "blank", "pousse", "icfp98", "5", "\\nT1\\r\\n\\n  \\n")
    assert reply.verdict is None and game.format_move(reply.move) == "T1"
    # other per-move protocols keep the first line and ignore the rest (no seed says otherwise)
    game, reply = answer_with(cache, tmp_path / "mnk", "mnk", "mnk", "3 3 3", "2 2\\nthinking\\n")
    assert reply.verdict is None and game.format_move(reply.move) == "2 2"


@pytest.mark.parametrize(
    ("entry", "kind"),
    [("pousse/bad_text", VerdictKind.BAD_OUTPUT), ("pousse/off_board", VerdictKind.ILLEGAL_MOVE)],
)
def test_icfp98_unparsable_and_illegal_moves(cache: ArtifactCache, entry: str, kind: VerdictKind) -> None:
    result = play(cache, "pousse", "4", [entry, "pousse/t1"])
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.player) == (kind, ref(entry).name), g.verdict
    assert g.winner == "t1"


def test_icfp98_did_not_kill_all_its_processes(cache: ArtifactCache) -> None:
    result = play(cache, "pousse", "4", [("pousse/left_child", ["42.75"]), "pousse/t1"])
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.player) == (VerdictKind.LEFT_PROCESSES, "left-child")
    assert processes_running("sleep", "42.75") == []


# -- mnk ----------------------------------------------------------------------


def test_mnk_protocol_plays_a_full_game(cache: ArtifactCache) -> None:
    result = play(cache, "mnk", "3 3 3", ["mnk/first_empty", "mnk/first_empty"])
    (g,) = result.games
    # first empty cell each time: X takes row 1 cells 1 and 3, then 2 2 ... X wins on the diagonal
    assert g.verdict.kind is VerdictKind.NORMAL
    assert [m.move for m in g.moves][:3] == ["1 1", "2 1", "3 1"]
    assert g.winner == "first-empty"


# -- gomocup -------------------------------------------------------------------


def test_gomocup_brain_plays_end_to_end_against_itself(cache: ArtifactCache) -> None:
    result = play(cache, "mnk", "4 4 3", ["gomocup/brain", "gomocup/brain"])
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
    # moves come back 0-based "x,y" and are recorded 1-based "x y"
    assert [m.move for m in g.moves][:4] == ["1 1", "2 1", "3 1", "4 1"]
    assert g.winner in ("brain", "brain#2")


def test_gomocup_brain_against_a_per_move_entry_on_a_rectangular_board(cache: ArtifactCache) -> None:
    result = play(
        cache,
        "mnk",
        "5 3 3",
        ["mnk/first_empty", "gomocup/brain"],
        orders=[["first-empty", "brain"], ["brain", "first-empty"]],
    )
    for g in result.games:
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
        assert len(g.moves) >= 5
    assert processes_running("python3", "-u", "brain.py") == []


def test_gomocup_brain_that_joins_mid_game_gets_the_whole_board(cache: ArtifactCache) -> None:
    """More than one new move since the brain last heard: BOARD with every stone, then its move."""
    r = ref("gomocup/brain")
    built = cache.ensure(r, local_fetch({r.digest: fixture("gomocup/brain")}))
    assert isinstance(built, Path)
    game = get_game("mnk")
    state = game.new_game("3 3 3", 2)
    history = []
    for text in ("1 1", "2 2", "3 3"):
        m = game.parse_move(text)
        state = game.play(state, m)
        history.append(m)
    with cache.hosts.open(built, EASY, "O") as host:
        proto = make_protocol("gomocup", game, host, r.run, Seat("brain", 1, "O"), EASY, "3 3 3")
        assert proto.begin(state) is None
        reply = proto.request_move(state, history)
        assert reply.verdict is None and game.format_move(reply.move) == "2 1"
        proto.end()


def test_gomocup_brain_hears_turn_for_the_one_new_move(
    cache: ArtifactCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After its own move and one reply, a brain is told TURN with that reply, not the whole board."""
    r = ref("gomocup/brain")
    built = cache.ensure(r, local_fetch({r.digest: fixture("gomocup/brain")}))
    assert isinstance(built, Path)
    game = get_game("mnk")
    state = game.new_game("3 3 3", 2)
    with cache.hosts.open(built, EASY, "X") as host:
        proto = make_protocol("gomocup", game, host, r.run, Seat("brain", 0, "X"), EASY, "3 3 3")
        assert proto.begin(state) is None
        assert isinstance(proto, GomocupProtocol) and proto.proc is not None
        sent: list[str] = []
        send = proto.proc.send

        def recording_send(text: str) -> None:
            sent.append(text)
            send(text)

        monkeypatch.setattr(proto.proc, "send", recording_send)
        history: list[Any] = []
        for reply_text in ("3 3", "3 1"):
            mine = proto.request_move(state, history)
            assert mine.verdict is None
            state = game.play(state, mine.move)
            theirs = game.parse_move(reply_text)
            state = game.play(state, theirs)
            history += [mine.move, theirs]
        assert proto.request_move(state, history).verdict is None
        proto.end()
    assert sent == ["BEGIN\n", "TURN 2,2\n", "TURN 2,0\n", "END\n"]


def test_gomocup_refusing_start_is_bad_output(cache: ArtifactCache) -> None:
    result = play(cache, "mnk", "3 3 3", ["gomocup/refuser", "gomocup/brain"])
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.player) == (VerdictKind.BAD_OUTPUT, "refuser")
    assert "refused START" in g.verdict.detail and g.winner == "brain"


def test_gomocup_silent_brain_times_out(cache: ArtifactCache, tmp_path: Path) -> None:
    d = tmp_path / "mute"
    d.mkdir()
    (d / "entry.yaml").write_text("name: mute\ngame: mnk\nprotocol: gomocup\nrun: [sh, brain.sh]\n")
    # answers the handshake, then never moves
    (d / "brain.sh").write_text("read a; echo OK; read b; echo UNKNOWN; exec sleep 43.5\n")
    result = play(cache, "mnk", "3 3 3", [d, "gomocup/brain"], limits=Limits(move_wall_s=0.3))
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.TIMEOUT and g.verdict.player == "mute", g.verdict
    assert processes_running("sleep", "43.5") == []


def test_gomocup_brain_that_dies_mid_game_is_a_crash(cache: ArtifactCache, tmp_path: Path) -> None:
    d = tmp_path / "dies"
    d.mkdir()
    (d / "entry.yaml").write_text("name: dies\ngame: mnk\nprotocol: gomocup\nrun: [sh, brain.sh]\n")
    (d / "brain.sh").write_text("read a; echo OK; read b; echo 'name=\"dies\"'; exit 9\n")
    result = play(cache, "mnk", "3 3 3", [d, "gomocup/brain"])
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.detail) == (VerdictKind.CRASH, "exit code 9"), g.verdict
