"""``execute_match``: the one function that plays a match from a spec (real builds, real plain host)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runner.domain.games.base import Game
from runner.domain.match_values import GameRecord, MatchSpec, VerdictKind
from workers.artifacts import ArtifactError, local_fetch
from workers.executor import artifacts_dir, execute_match, work_dir
from workers.match import MatchObserver
from workers.sandbox import PlainHostFactory

from .conftest import EASY, fixture, ref

BOARD = "----\n----\n"  # 4x2 boxing: a few moves


def spec_of(*names: str, sandbox: str = "none") -> tuple[MatchSpec, dict[str, Path]]:
    refs = {ref(n).name: ref(n) for n in names}
    paths = {ref(n).digest: fixture(n) for n in names}
    order = list(refs)
    spec = MatchSpec.of(
        match_id="exec", game="boxing", board_id="b", board_text=BOARD, orders=[order, order[::-1]],
        entries=refs, limits=EASY, seed=0, sandbox=sandbox,
    )  # fmt: skip
    return spec, paths


class Seen(MatchObserver):
    def __init__(self) -> None:
        self.finished: list[int] = []

    def game_finished(self, number: int, record: GameRecord, game: Game[Any, Any], state: Any) -> None:
        self.finished.append(number)


def test_plays_every_game_of_the_spec_with_the_hosts_of_its_sandbox(tmp_path: Path) -> None:
    spec, paths = spec_of("boxing/native", "boxing/first_fit")
    seen = Seen()
    result = execute_match(spec, local_fetch(paths), tmp_path / "cache", worker="w1", observer=seen)
    assert result.match_id == "exec" and result.worker == "w1"
    assert [g.order for g in result.games] == [list(o) for o in spec.orders]
    assert all(g.verdict.kind is VerdictKind.NORMAL and g.moves for g in result.games)
    assert result.digests == {name: r.digest for name, r in spec.entries.items()}
    assert seen.finished == [1, 2]
    assert len(list((tmp_path / "cache").iterdir())) >= 2  # built once per digest, in the given cache


def test_a_failed_build_is_the_entrys_verdict_not_a_machine_error(tmp_path: Path) -> None:
    spec, paths = spec_of("boxing/native", "boxing/broken_build")
    result = execute_match(spec, local_fetch(paths), tmp_path, worker="w1", hosts=PlainHostFactory())
    assert {(g.verdict.kind, g.verdict.player) for g in result.games} == {
        (VerdictKind.BUILD_FAILED, "broken-build")
    }
    assert all(g.winner == "native" for g in result.games)


def unreachable(digest: str) -> bytes:
    raise ArtifactError(f"no artifact {digest[:12]} anywhere")


def test_a_machine_failure_is_a_system_error_for_every_planned_game(tmp_path: Path) -> None:
    spec, _ = spec_of("boxing/native", "boxing/first_fit")
    result = execute_match(spec, unreachable, tmp_path, worker="w1")  # never raises
    assert len(result.games) == len(spec.orders)
    for g in result.games:
        assert (g.verdict.kind, g.verdict.player, g.winner) == (VerdictKind.SYSTEM_ERROR, None, None)
        assert g.verdict.detail.startswith("w1: ArtifactError: ") and "no artifact" in g.verdict.detail
        assert set(g.scores.values()) == {0}
    assert result.system_error is not None and result.worker == "w1"


def test_an_artifact_with_the_wrong_digest_never_runs(tmp_path: Path) -> None:
    """Every worker would find the same mismatch: the entries' build_failed, never a system_error
    (issue 34, item 1)."""
    spec, paths = spec_of("boxing/native", "boxing/first_fit")
    swapped = {d: fixture("boxing/segv") for d in paths}  # every digest now fetches another entry
    result = execute_match(spec, local_fetch(swapped), tmp_path, worker="w1")
    assert result.system_error is None and result.games
    for g in result.games:
        assert g.verdict.kind is VerdictKind.BUILD_FAILED and "digest mismatch" in g.verdict.detail
        assert not g.moves


def test_a_cache_this_machine_cannot_make_is_its_own_fault_naming_no_entry(tmp_path: Path) -> None:
    """A worker whose cache directory is a file fails every match the same way: a system_error
    retried elsewhere that names no entry (so it counts in full towards quarantine), never the
    entries' build_failed (the fleet drill of tests/integration/test_multi_machine.py)."""
    spec, paths = spec_of("boxing/native", "boxing/first_fit")
    cache = tmp_path / "artifacts"
    cache.write_text("not a directory\n")
    result = execute_match(spec, local_fetch(paths), cache, worker="w1")
    assert result.system_error is not None and "artifact cache" in result.system_error.detail
    assert all(g.verdict.kind is VerdictKind.SYSTEM_ERROR for g in result.games)
    assert result.artifact_fault == ""


def test_an_unknown_sandbox_is_a_system_error(tmp_path: Path) -> None:
    spec, paths = spec_of("boxing/native", "boxing/first_fit", sandbox="chroot")
    result = execute_match(spec, local_fetch(paths), tmp_path, worker="w1")
    assert result.system_error is not None and "unknown sandbox 'chroot'" in result.system_error.detail


def test_one_work_dir_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOURNEY_WORK_DIR", str(tmp_path))
    assert work_dir() == tmp_path and artifacts_dir() == tmp_path / "artifacts"
    monkeypatch.delenv("TOURNEY_WORK_DIR")
    assert work_dir() == Path.home() / ".cache" / "tourney"
