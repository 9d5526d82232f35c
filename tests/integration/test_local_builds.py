"""``tourney run``'s local worker builds the entries itself, on its first match that needs
each: real Redis, a real Celery worker, real builds. A failed build ends its games as it
does in a run played inline; a run stopped during a build leaves nothing and resumes.
"""

from __future__ import annotations

import re
import shutil
import signal
from pathlib import Path
from typing import Any

from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import (
    SCAN,
    assert_nothing_left,
    assert_one_official_result_per_match,
    standings,
    start_tourney,
    tourney,
    unique,
    wait_for,
    write_config,
)

#: a build in a worker's log (``workers.artifacts``: "built NAME (DIGEST) in 0.2s: ok")
WORKER_BUILD = re.compile(r"\] built \S+ \([0-9a-f]+\) in ")
#: where a run's builds are cached: the inline one's or its local worker's (named in verdicts)
CACHE = re.compile(r"RUN/workers/[^/\s]+/artifacts")


def _worker_logs(run_dir: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted((run_dir / "logs").glob("worker-*.log")))


def _games(run_dir: Path) -> list[tuple[str, int, str, str, str, str, str, list[Any]]]:
    """Every game's end and transcript: match, game, winner, reason, verdict (kind, player,
    detail with the run directory's cache path taken out) and moves."""
    with RunStore.open(run_dir) as store:
        rows = sorted(store.match_rows(), key=lambda r: r.match_id)
    out = []
    for r in rows:
        assert r.result is not None
        for k, g in enumerate(r.result.games):
            v = g.verdict
            detail = CACHE.sub("CACHE", v.detail.replace(str(run_dir), "RUN"))
            moves = [(m.player, m.move) for m in g.moves]
            out.append((r.match_id, k, str(g.winner), g.reason, v.kind.value, str(v.player), detail, moves))
    return out


BROKEN = """\
name: broken
game: mnk
protocol: mnk
build: "echo 'start of the log'; echo 'x.c:2:1: error: no such thing' >&2; exit 2"
run: [./a.out]
"""


def test_a_failed_build_ends_the_games_as_in_a_run_played_inline(tmp_path: Path) -> None:
    """The worker builds each entry once (variants share it); a failed build gives the same
    verdicts, standings and build log as the same run played inline."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "entry.yaml").write_text(BROKEN)
    config = write_config(tmp_path, "fails", entrants=2, sandbox="none", entry=SCAN)
    text = config.read_text().replace('"entries": [', f'"entries": [{{"path": "{broken}"}}, ', 1)
    config.write_text(text)

    runs = {"inline": tmp_path / "inline", "worker": tmp_path / "worker"}
    for name, how in (("inline", ["--inline"]), ("worker", ["--workers", "1"])):
        done = tourney("run", config, *how, "--no-progress", "--run-dir", runs[name], cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert_nothing_left([str(runs[name])])

    worker_log = _worker_logs(runs["worker"])
    assert len(WORKER_BUILD.findall(worker_log)) == 2, worker_log  # broken, and scan for its variants
    assert standings(runs["worker"]) == standings(runs["inline"])
    games = _games(runs["worker"])
    assert games == _games(runs["inline"])
    failed = [g for g in games if g[4] == "build_failed"]
    assert failed and all(g[5] == "broken" and "x.c:2:1: error: no such thing" in g[6] for g in failed)

    def build_log(run_dir: Path) -> str:
        shown = tourney("build-log", run_dir, "broken", cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        text = CACHE.sub("CACHE", shown.stdout.replace(str(run_dir), "RUN"))
        return re.sub(r"\d+\.\d s([;\]])", r"T s\1", text)  # the build's own duration

    logged = build_log(runs["worker"])
    assert "x.c:2:1: error: no such thing" in logged and logged == build_log(runs["inline"])


def test_a_run_stopped_during_the_workers_build_leaves_nothing_and_resumes(tmp_path: Path) -> None:
    """SIGTERM while the local worker builds: no sandbox or process is left, and the run
    resumes to its end with no half-made build left in the worker's cache."""
    sandbox = "bwrap" if bwrap_problem() is None else "none"
    slow = tmp_path / "slow"
    shutil.copytree(SCAN, slow)
    yaml = (slow / "entry.yaml").read_text()
    (slow / "entry.yaml").write_text(yaml.replace("build: cc", "build: sleep 1.5; cc"))
    tag = unique("build-stop")
    config = write_config(tmp_path, "stopped", entrants=3, sandbox=sandbox, tag=tag, entry=slow)
    run_dir = tmp_path / "runs" / "stopped"
    cache = run_dir / "workers" / "1" / "artifacts"

    out = tmp_path / "run.out"
    proc = start_tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path, log=out)
    try:
        wait_for(lambda: any(p.is_dir() for p in cache.glob(".*")), 60, "the worker's build")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143, out.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert_nothing_left([str(run_dir), tag])

    again = tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert_nothing_left([str(run_dir), tag])
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # no half-made build
    (entry,) = [p for p in cache.iterdir() if p.is_dir()]
    assert (entry / "ready").exists() and (entry / "entry" / "scan").exists()
    assert_one_official_result_per_match(run_dir)
    with RunStore.open(run_dir) as store:
        # this machine's key (local@HOST), its local worker processes (local-N-PID@HOST)
        assert {r.worker for r in store.match_rows()} and all(
            r.worker.split("/")[1].startswith("local-") for r in store.match_rows()
        )
