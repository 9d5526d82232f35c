"""One entry's artifact that cannot be built, copied out, packed or matched is that entry's
``build_failed``, never a worker's failure (issue 34, item 1): real Redis, the run's real local
Celery worker, real builds in the real bwrap sandbox. Each run finishes with every other match
played, exit 0, and no worker quarantined.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.domain.match_values import VerdictKind
from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import (
    SCAN,
    assert_nothing_left,
    start_tourney,
    unique,
    write_config,
)

#: 20 nested directories of 250-character names: each fits a name, the whole never a path
#: (``mkdir -p`` makes them a directory at a time, never through the whole path)
DEEP_BUILD = "cc -O2 -o scan main.c && mkdir -p " + "/".join(["d" * 250] * 20)


def _needs_bwrap() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"the real sandbox cannot run here: {problem}")


def _entry(tmp_path: Path, name: str, build: str | None = None) -> Path:
    """A copy of the ``scan`` player under another name (and build command)."""
    d = tmp_path / name
    shutil.copytree(SCAN, d)
    text = (d / "entry.yaml").read_text().replace("name: scan", f"name: {name}")
    if build is not None:
        text = text.replace("build: cc -O2 -o scan main.c", f"build: {build!r}")
    (d / "entry.yaml").write_text(text)
    return d


def _config(tmp_path: Path, name: str, tag: str, extra: Path) -> Path:
    """A round robin of three ``scan`` players and ``extra``, in the real sandbox."""
    config = write_config(tmp_path, name, entrants=3, sandbox="bwrap", tag=tag, games_per_pairing=2)
    text = config.read_text().replace('"entries": [', f'"entries": [{{"path": "{extra}"}}, ', 1)
    config.write_text(text)
    return config


def _run_to_its_end(
    tmp_path: Path, config: Path, log: Path, markers: list[str], during: Callable[[], None] | None = None
) -> int:
    proc = start_tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path, log=log)
    try:
        if during is not None:
            during()
        return proc.wait(240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert_nothing_left(markers)


def _assert_only_the_entry_failed(run_dir: Path, entry: str, why: str, log: str) -> None:
    """Every match is done; the entry's games are its ``build_failed`` (``why`` in one line),
    every other game was played to a normal end; no worker failed or was quarantined."""
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        meta = store.meta()
        quarantines = list(store.events("quarantined"))
    assert rows and {r.state for r in rows} == {"done"}, [(r.match_id, r.state) for r in rows]
    with_entry = [r for r in rows if any(entry in order for order in r.plan.orders)]
    others = [r for r in rows if r not in with_entry]
    assert with_entry and others
    for r in with_entry:
        assert r.result is not None
        for g in r.result.games:
            assert g.verdict.kind is VerdictKind.BUILD_FAILED and g.verdict.player == entry, g.verdict
            assert why in g.verdict.detail and "\n" not in g.verdict.detail, g.verdict.detail
            assert g.winner is not None and g.winner != entry
    for r in others:
        assert r.result is not None and r.result.games
        assert all(g.verdict.kind is VerdictKind.NORMAL and g.moves for g in r.result.games), r.match_id
    assert not quarantines, quarantines
    workers = meta.get("workers") or {}
    assert workers and not any(w.get("quarantined") for w in workers.values()), workers
    assert not any(w.get("system_errors") for w in workers.values()), workers
    assert "QUARANTINED" not in log


def test_a_build_leaving_paths_too_long_for_the_disk_is_its_build_failed(tmp_path: Path) -> None:
    _needs_bwrap()
    tag = unique("deep-build")
    deep = _entry(tmp_path, "deep", DEEP_BUILD)
    config = _config(tmp_path, "deep", tag, deep)
    run_dir = tmp_path / "runs" / "deep"
    log = tmp_path / "run.log"
    code = _run_to_its_end(tmp_path, config, log, [tag, str(run_dir)])
    text = log.read_text(errors="replace")
    assert code == 0, text[-3000:]
    _assert_only_the_entry_failed(run_dir, "deep", "holds a path of", text)


def test_an_entry_rewritten_after_the_run_read_it_is_its_build_failed(tmp_path: Path) -> None:
    """The coordinator hashed the entry when it loaded the config; it is rewritten before it
    is packed: what was packed is not the code the run recorded, and no worker is blamed."""
    _needs_bwrap()
    tag = unique("rewritten")
    shifty = _entry(tmp_path, "shifty")
    config = _config(tmp_path, "shifty", tag, shifty)
    run_dir = tmp_path / "runs" / "shifty"
    log = tmp_path / "run.log"
    rewritten = threading.Event()

    def rewrite_once_the_run_has_read_it() -> None:
        # the frozen config is the run's first file: the entries were hashed just before, and
        # the embedded Redis and the worker start before anything is packed
        deadline = time.monotonic() + 60
        while not (run_dir / "config.yaml").exists() and time.monotonic() < deadline:
            time.sleep(0.001)
        with open(shifty / "main.c", "a") as f:
            f.write("/* rewritten while the run starts */\n")
        rewritten.set()

    code = _run_to_its_end(tmp_path, config, log, [tag, str(run_dir)], rewrite_once_the_run_has_read_it)
    text = log.read_text(errors="replace")
    assert rewritten.is_set()
    assert code == 0, text[-3000:]
    _assert_only_the_entry_failed(run_dir, "shifty", "changed after the run read it", text)
    said = (run_dir / "logs" / "coordinator.log").read_text()
    assert "REFUSED artifact: entry shifty: changed after the run read it" in said  # when it packed
