"""``scale_nps`` across unlike machines (docs/engines.md, "Clocks scaled to the machine"):
two real workers, one slowed by a cgroup v1 CPU quota (``cpu.cfs_quota_us`` on cgroups this
test creates and removes: the slow worker's an eighth of a core, the fast one's half), play
stockfish at a time per move scaled to each one's measured speed; the nodes searched per
move agree within 15% across the two on a quiet machine, 50% with the suite's load (each search's
nodes taken as its reported speed times its time, see ``_nodes_per_move``).

Without the scaling the slowed worker's engine would search its nominal time at a fraction of
the speed: the test first checks that the quota did make that worker several times slower,
so agreement cannot come from equal machines.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import yaml

from runner.orchestration.redis_server import EmbeddedRedis
from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT, Organiser, env, private_tmp, tourney, wait_for

CPU_CGROUP = Path("/sys/fs/cgroup/cpu")
#: each worker's share of one core (its engines, sandboxes and itself): both held to a quota
#: with a high weight against the rest of the machine (cpu.shares), so that each runs at a
#: steady speed on a shared, loaded host, the slow one about a quarter of the fast one's
QUOTA = {"fast": 0.5, "slow": 0.12}
SHARES = 8192
PERIOD_US = 10_000


def _problem() -> str | None:
    if not Path("/usr/games/stockfish").exists():
        return "stockfish is not installed (apt-get install stockfish)"
    if bwrap_problem() is not None:
        return f"no sandbox: {bwrap_problem()}"
    if not (CPU_CGROUP / "cpu.cfs_quota_us").exists():
        return "no cgroup v1 cpu controller at /sys/fs/cgroup/cpu"
    if not os.access(CPU_CGROUP, os.W_OK):
        return "cannot create cgroups under /sys/fs/cgroup/cpu (not root)"
    return None


pytestmark = [pytest.mark.integration, pytest.mark.skipif(_problem() is not None, reason=str(_problem()))]


@contextlib.contextmanager
def cpu_quotas(shares: dict[str, float]) -> Iterator[dict[str, Path]]:
    """A cpu cgroup of this test's own per name, each with its share of a core; removed
    afterwards (what runs in them must be gone by then: the caller stops it first)."""
    token = secrets.token_hex(3)
    groups: dict[str, Path] = {}
    try:
        for name, share in shares.items():
            group = groups[name] = CPU_CGROUP / f"tourney-test-quota-{token}-{name}"
            group.mkdir()
            # a short period: a search of a few periods sees the quota's average speed, not
            # a burst of a whole period's budget at the core's full speed
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(int(PERIOD_US * share)))
            (group / "cpu.shares").write_text(str(SHARES))
        yield groups
    finally:
        for group in groups.values():
            for pid in (group / "cgroup.procs").read_text().split():  # only ours can be in it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            for _ in range(100):
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)


def _stockfish(directory: Path, name: str) -> Path:
    entry = directory / name
    entry.mkdir()
    text = (ROOT / "entries" / "chess" / "stockfish" / "entry.yaml").read_text()
    (entry / "entry.yaml").write_text(text.replace("name: stockfish", f"name: {name}"))
    return entry


def _seconds(stamp: str) -> float:
    hours, minutes, seconds = stamp.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def _nodes_per_move(log: str) -> list[int]:
    """The nodes of each search in an engine log: its speed as it last reported it (``info ...
    nps N``) times the time from ``go`` to ``bestmove``. Not the last ``info ... nodes``:
    stockfish reports nodes only at the end of each depth, so that count falls up to half a
    search short, by how far the last depth got, and a median of a few dozen jumped 20%."""
    out: list[int] = []
    asked: float | None = None
    nps: int | None = None
    for line in log.splitlines():
        stamp, _direction, *words = line.split()
        if words[:1] == ["go"]:
            asked, nps = _seconds(stamp), None
        elif words[:1] == ["info"] and "nps" in words:
            nps = int(words[words.index("nps") + 1])
        elif words[:1] == ["bestmove"] and asked is not None and nps is not None:
            elapsed = (_seconds(stamp) - asked) % 86400  # across midnight too
            out.append(int(nps * elapsed))
            asked = None
    return out


def test_clocks_scaled_to_each_worker_give_the_same_nodes_per_move(tmp_path: Path) -> None:
    config = {
        "name": "scaled",
        "seed": 11,
        "game": "chess",
        # the quota holds a whole period's worth of the slow worker back at times: a wide margin
        # moves of 0.2 s on the fast worker, 1 s on the slow one: a move's fixed costs (waking
        # the engine, the pipes; longer under load) were a sixth of the fast one's 0.09 s moves
        # at a load of 10, and it searched 16% fewer nodes than the slow one
        "each": {"st": 0.3, "scale_nps": 200_000, "log": "engine", "timemargin": 1000},
        "openings": {"file": str(ROOT / "configs" / "openings.epd"), "count": 4, "per_match": 1},
        "adjudication": {"maxmoves": 6},
        "limits": {"move_wall_s": 30.0},
        # the slow worker is slow on purpose: its match must not be copied to the fast one
        "timing": {"straggler_factor": 1000},
        "entries": [{"path": str(_stockfish(tmp_path, "sf-a"))}, {"path": str(_stockfish(tmp_path, "sf-b"))}],
        "stages": [{"name": "s", "planner": "round_robin", "boards": ["openings"], "games_per_pairing": 2}],
    }
    path = tmp_path / "scaled.yaml"
    path.write_text(yaml.safe_dump(config))
    run_dir = tmp_path / "runs" / "scaled"
    organiser = Organiser(tmp_path / "home")
    server = EmbeddedRedis(tmp_path / "redis").start()
    workers: list[subprocess.Popen[bytes]] = []
    try:
        with cpu_quotas(QUOTA) as groups:
            try:
                for name in ("fast", "slow"):
                    work = tmp_path / name
                    work.mkdir()
                    argv = [
                        sys.executable, "-m", "runner.cli", "worker", "--broker", server.url(),
                        "--concurrency", "1", "--name", name, "--work-dir", str(work),
                        "--key-file", str(organiser.enrol(name, work / "worker.key")),
                    ]  # fmt: skip
                    # into its quota before it starts anything
                    argv = ["sh", "-c", f'echo $$ > {groups[name]}/cgroup.procs && exec "$@"', "sh", *argv]
                    with open(work / "worker.log", "ab") as out:
                        workers.append(
                            subprocess.Popen(
                                argv,
                                cwd=work,
                                env=env(**private_tmp(work)),
                                stdout=out,
                                stderr=subprocess.STDOUT,
                                start_new_session=True,
                            )
                        )
                r = redis.Redis.from_url(server.url())
                wait_for(lambda: len(list(r.scan_iter(match="tourney:worker:*"))) >= 2, 180, "both workers")
                r.close()
                done = tourney(
                    "run", path, "--broker", server.url(), "--no-local-workers", "--no-progress",
                    cwd=tmp_path, timeout=900, extra_env=organiser.env(),
                )  # fmt: skip
                assert done.returncode == 0, done.stdout + done.stderr
            finally:
                for p in workers:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(p.pid, signal.SIGQUIT)
                for p in workers:
                    try:
                        p.wait(20)
                    except subprocess.TimeoutExpired:
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(p.pid, signal.SIGKILL)
                        p.wait(10)
    finally:
        server.stop()
    with RunStore.open(run_dir) as store:
        rows = [r for r in store.match_rows() if r.result is not None]
    nodes: dict[str, list[int]] = {"fast": [], "slow": []}
    factors: dict[str, set[float]] = {"fast": set(), "slow": set()}
    for row in rows:
        assert row.result is not None
        for game in row.result.games:
            assert game.verdict.kind.value == "normal", game.verdict
            for name, scale in game.clock_scale.items():
                factors[row.result.worker].add(scale.factor)
                nodes[row.result.worker] += _nodes_per_move(game.engine_logs[name])
    assert nodes["fast"] and nodes["slow"], "both workers played"
    fast, slow = max(factors["fast"]), min(factors["slow"])
    assert slow > 2 * fast, (factors, "the quota made the slow worker several times slower")
    a, b = statistics.median(nodes["fast"]), statistics.median(nodes["slow"])
    print(f"nodes per move, median: fast {a:.0f}, slow {b:.0f}; clock factors {factors}")
    # Within 15% on a quiet machine (docs/engines.md); unscaled, as far apart as the factors
    # (about fourfold). Each worker measures its speed once, and the suite's own load moves the
    # half-core worker's real share between that measure and its moves (its two measures in
    # one run: 0.79 and 0.93), not the eighth-core one's: 37% apart was seen at load 8. What
    # is tested is that the scaling takes out most of the gap, which no load undoes.
    assert max(a, b) / min(a, b) <= 1.5, (a, b, factors)
