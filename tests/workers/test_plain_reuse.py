"""Kept game directories for ``sandbox: none`` (workers.sandbox.plain_reuse): a game that
left its directory as given hands it to the entry's next game; any trace of a game
(a file written, changed in place, added to TMPDIR) means a fresh copy instead."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.domain.match_values import Limits
from workers.sandbox import game_host_factory
from workers.sandbox.plain_reuse import ReusingPlainHostFactory, shared_plain_factory

MOVE = Limits(move_wall_s=10)


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    d = tmp_path / "entry"
    (d / "sub").mkdir(parents=True)
    (d / "data.txt").write_text("original\n")
    (d / "sub" / "more.txt").write_text("more\n")
    return d


@pytest.fixture
def factory() -> Iterator[ReusingPlainHostFactory]:
    f = ReusingPlainHostFactory()
    yield f
    f.close_all()


def _game(factory: ReusingPlainHostFactory, entry: Path, script: str) -> Path:
    """One game of one move running ``script`` (sh) in the entry's copy; its working directory."""
    with factory.open(entry, Limits(), "X") as host:
        out = host.run(["sh", "-c", script], b"", MOVE)
        assert out.failure is None and out.exit_code == 0, out
        return host.workdir


def test_an_untouched_directory_serves_the_next_game(factory: ReusingPlainHostFactory, entry: Path) -> None:
    first = _game(factory, entry, "cat data.txt sub/more.txt > /dev/null")
    assert first.exists() and len(factory) == 1  # kept, not removed
    second = _game(factory, entry, 'test "$(cat data.txt)" = original')
    assert second == first
    assert (factory.created, factory.reused) == (1, 1)


@pytest.mark.parametrize(
    "script",
    [
        "echo state > support.txt",  # a new file in the working copy
        "echo changed > data.txt",  # a file rewritten
        "rm sub/more.txt",  # a file removed
        'echo x > "$TMPDIR/left"',  # something left in its TMPDIR
        # same size, modification time set back: the change time still tells
        "t=$(stat -c %y data.txt); printf 'ORIGINAL\\n' > data.txt; touch -d \"$t\" data.txt",
    ],
)
def test_a_game_that_left_a_trace_is_not_reused(
    factory: ReusingPlainHostFactory, entry: Path, script: str
) -> None:
    first = _game(factory, entry, script)
    assert not first.parent.exists()  # removed at once
    assert len(factory) == 0
    # the next game starts from a fresh copy of the entry
    second = _game(
        factory, entry, 'test "$(cat data.txt)" = original && test -f sub/more.txt && ! test -e support.txt'
    )
    assert second != first
    assert (factory.created, factory.reused) == (2, 0)


def test_a_changed_entry_directory_is_a_new_key(factory: ReusingPlainHostFactory, entry: Path) -> None:
    _game(factory, entry, "true")
    (entry / "data.txt").write_text("new version\n")
    _game(factory, entry, "test \"$(cat data.txt)\" = 'new version'")
    assert factory.created == 2


def test_a_kept_directory_touched_while_idle_is_not_handed_out(
    factory: ReusingPlainHostFactory, entry: Path
) -> None:
    first = _game(factory, entry, "true")
    (first / "data.txt").write_text("tampered\n")
    _game(factory, entry, 'test "$(cat data.txt)" = original')
    assert (factory.created, factory.reused) == (2, 0)
    assert not first.parent.exists()


def test_at_most_max_idle_are_kept_and_close_all_removes_them(tmp_path: Path) -> None:
    factory = ReusingPlainHostFactory(max_idle=2)
    entries = []
    for i in range(3):
        d = tmp_path / f"e{i}"
        d.mkdir()
        (d / "f").write_text(str(i))
        entries.append(d)
    roots = [_game(factory, d, "true").parent for d in entries]
    assert len(factory) == 2 and not roots[0].exists() and roots[1].exists() and roots[2].exists()
    factory.close_all()
    assert len(factory) == 0 and not any(r.exists() for r in roots)


def test_none_plays_through_this_process_s_one_reusing_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOURNEY_SANDBOX_REUSE", raising=False)
    assert game_host_factory("none") is shared_plain_factory()
    monkeypatch.setenv("TOURNEY_SANDBOX_REUSE", "0")
    assert not isinstance(game_host_factory("none"), ReusingPlainHostFactory)
