"""Entries learn the contest's parameters in their build, and their stderr reaches the result.

Real builds (``sh -c`` through the plain host) and real moves; the build cache
keeps one build per expanded build command, so a build that depends on the
board is redone for another board and shared otherwise.
"""

from __future__ import annotations

from pathlib import Path

from runner.domain.match_values import (
    EntryRef,
    GameRecord,
    Limits,
    MatchResult,
    MatchSpec,
    Verdict,
    VerdictKind,
)
from runner.domain.placeholders import ContestParams
from runner.domain.wire import decode, encode
from workers.artifacts import ArtifactCache, cache_key, local_fetch
from workers.executor import contest_params, execute_match
from workers.sandbox import PlainHostFactory
from workers.stderr_notes import MAX_CHARS, MAX_LINES, StderrNotes

from .conftest import ref

SIZED = """\
import sys

# plays the first free cell, but only on the board its build was made for
built = open("built_for.txt").read().split()
lines = sys.stdin.read().split("\\n")
w, h, k = (int(v) for v in lines[0].split())
if built != [f"{w}x{h}x{k}", "5000"]:
    sys.exit(f"built for {built}, asked to play {w}x{h}x{k}")
taken = {tuple(int(v) for v in ln.split()) for ln in lines[1:] if ln.strip()}
print(*next((x, y) for y in range(1, h + 1) for x in range(1, w + 1) if (x, y) not in taken))
"""


def _sized_entry(tmp_path: Path) -> Path:
    d = tmp_path / "sized"
    d.mkdir()
    (d / "main.py").write_text(SIZED)
    (d / "entry.yaml").write_text(
        "name: sized\ngame: mnk\nprotocol: mnk\n"
        'build: "echo {size} {move_time_ms} > built_for.txt"\n'
        "run: [python3, main.py]\n"
    )
    return d


def _spec(board: str, refs: dict[str, EntryRef]) -> MatchSpec:
    names = list(refs)
    return MatchSpec.of(
        match_id=f"sized-{board}", game="mnk", board_id="b", board_text=board, orders=[names],
        entries=refs, limits=Limits(move_wall_s=5.0), seed=3, sandbox="none",
    )  # fmt: skip


def test_a_build_learns_the_board_and_move_limit_and_is_kept_per_board(tmp_path: Path) -> None:
    entry = _sized_entry(tmp_path)
    a, b = ref(entry), ref(entry, name="sized#2")
    fetch = local_fetch({a.digest: entry})
    cache = tmp_path / "cache"
    for board in ("3 3 3", "4 4 3", "3 3 3"):
        result = execute_match(_spec(board, {"sized": a, "sized#2": b}), fetch, cache, worker="w")
        assert [g.verdict.kind for g in result.games] == [VerdictKind.NORMAL], result.games[0].verdict
    # one build per board (the third match reused the first's); variants of a digest share it
    keys = sorted(p.name for p in cache.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert len(keys) == 2 and all(k.startswith(f"{a.digest}-") for k in keys)
    assert cache_key(a, ContestParams("3x3x3", 5.0)) in keys
    assert cache_key(a, None) == a.digest  # nothing filled: the digest, as before


def test_contest_params_only_when_a_build_uses_them(tmp_path: Path) -> None:
    entry = _sized_entry(tmp_path)
    assert contest_params(_spec("9 9 5", {"sized": ref(entry)})) == ContestParams("9x9x5", 5.0)
    plain = ref(Path(__file__).resolve().parents[1] / "fixtures" / "boxing" / "native")
    assert contest_params(_spec("9 9 5", {"native": plain})) is None


def test_a_failed_build_log_comes_back_with_the_result(tmp_path: Path) -> None:
    d = tmp_path / "broken"
    d.mkdir()
    (d / "entry.yaml").write_text(
        "name: broken\ngame: mnk\nprotocol: mnk\n"
        "build: \"echo first line; echo 'x.c:1: error: nope' >&2; exit 3\"\nrun: [./a.out]\n"
    )
    r = ref(d)
    fetch = local_fetch({r.digest: d})
    result = execute_match(_spec("3 3 3", {"broken": r}), fetch, tmp_path / "c", worker="w")
    assert set(result.build_logs) == {"broken"}
    log = result.build_logs["broken"]
    assert "first line" in log and "x.c:1: error: nope" in log and "exit code 3" in log
    again = decode(encode(result), MatchResult)
    assert again.build_logs == result.build_logs
    cached = ArtifactCache(tmp_path / "c", PlainHostFactory()).cached(r.digest)
    assert cached is not None and not isinstance(cached, Path) and cached.digest == r.digest


def test_stderr_notes_keep_distinct_lines_with_counts_capped() -> None:
    notes = StderrNotes()
    notes.add("a", b"budget cut\n\n")
    notes.add("a", b"budget cut\nother\n")
    notes.add("b", b"")
    for i in range(MAX_LINES + 3):
        notes.add("c", f"line {i}\n".encode())
    notes.add("d", b"x" * (MAX_CHARS + 50) + b"\n\xff\n")
    got = notes.summary()
    assert got["a"] == ["budget cut (x2)", "other"]
    assert "b" not in got
    assert len(got["c"]) == MAX_LINES + 1 and got["c"][-1] == "... and 3 more line(s)"
    assert got["d"] == ["x" * MAX_CHARS, "\ufffd"]
    record = GameRecord(["a"], None, {"a": 0}, Verdict(VerdictKind.NORMAL, None, ""), [])
    attached = notes.attach(record)
    assert attached.stderr == got and decode(encode(attached), GameRecord) == attached
    assert StderrNotes().attach(record) is record
