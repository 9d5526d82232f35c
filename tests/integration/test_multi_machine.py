"""Scale-out: workers on separate "machines" (network namespaces), sharing nothing but Redis.

Each worker runs in its own network namespace, reaches Redis over its veth
link, has its own working directory, and cannot even see the coordinator's
run directory or the entry sources (hidden under empty tmpfs mounts): the
entries reach it only as artifacts through Redis. The second worker joins
mid-run and must take matches. The standings equal the same config's
``--inline`` run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.netns import NetnsUnavailable, machines, netns_problem
from runner.orchestration.redis_server import EmbeddedRedis
from runner.storage.store import RunStore
from tests.forked_cli import Running
from tests.integration.helpers import (
    SCAN,
    Organiser,
    assert_nothing_left,
    assert_one_official_result_per_match,
    env,
    private_tmp,
    standings,
    start_tourney,
    store_rows,
    tourney,
    unique,
    wait_for,
    write_config,
)


def worker_argv(url: str, name: str, work: Path, key_file: Path) -> list[str]:
    """A remote worker: its own enrolled key file (0600), and the organiser's consent to the
    config's ``sandbox: none`` (these tests' entries are our own)."""
    return [
        sys.executable,
        "-m",
        "runner.cli",
        "worker",
        "--broker",
        url,
        "--concurrency",
        "1",
        "--name",
        name,
        "--work-dir",
        str(work),
        "--key-file",
        str(key_file),
        "--allow-unsandboxed",
    ]


def test_two_namespaced_workers_match_inline(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    problem = netns_problem()
    if problem is not None:
        pytest.skip(f"network namespaces unavailable: {problem}")
    tag = unique("netns")
    coord = tmp_path / "coordinator"
    config = write_config(coord, "netns", entrants=4, sleep=0.05, tag=tag)
    inline = tourney("run", config, "--inline", "--no-progress", "--run-dir", coord / "inline", cwd=coord)
    assert inline.returncode == 0, inline.stderr
    run_dir = coord / "runs" / "netns"
    worker_root = tmp_path_factory.mktemp("machines")

    try:
        ctx = machines(2)
        hosts = ctx.__enter__()
    except NetnsUnavailable as e:
        pytest.skip(f"network namespaces unavailable: {e}")
    server = None
    proc: Running | None = None
    try:
        server = EmbeddedRedis(tmp_path / "redis", bind=["127.0.0.1", *(m.host_ip for m in hosts)]).start()
        log = coord / "run.log"
        organiser = Organiser(coord / "home")
        proc = start_tourney(
            "run",
            config,
            "--broker",
            server.url(),
            "--no-local-workers",
            "--no-progress",
            cwd=coord,
            log=log,
            extra_env=organiser.env(),
        )
        hide = [coord, SCAN]  # nothing of the coordinator's files is visible to the workers
        for i, m in enumerate(hosts):
            if i == 1:  # the second worker joins mid-run
                wait_for(lambda: any(r.state == "done" for r in store_rows(run_dir)), 60, "a first result")
            work = worker_root / f"m{i}"
            work.mkdir()
            key_file = organiser.enrol(f"ns-{i}", work / "worker.key")
            m.popen(
                worker_argv(server.url(m.host_ip), f"ns-{i}", work, key_file),
                cwd=work,
                log=work / "worker.log",
                hide=hide,
                env=env(**private_tmp(work)),
            )
        rc = proc.wait(150)
        assert rc == 0, log.read_text(errors="replace")[-4000:]
        with RunStore.open(run_dir) as store:
            played = {r.worker for r in store.match_rows()}
        assert played == {"ns-0", "ns-1"}, played
        for i in range(2):
            assert list((worker_root / f"m{i}" / "artifacts").iterdir()), "entries were built from artifacts"
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        for m in hosts:
            m.stop()
        ctx.__exit__(None, None, None)
        if server is not None:
            server.stop()
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(coord / "inline")
    assert_nothing_left([tag, str(worker_root)])


def test_a_broken_worker_is_quarantined_and_healthy_ones_finish(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The drill: one worker whose machine fails every match (its build cache is unusable, a
    failure of the machine, not of any entry) beside two healthy ones, each on its own
    "machine". The broken one is quarantined in the run and plays none of its matches from
    then on (a run's quarantine, not a revocation: it keeps serving the organiser's other
    runs); no match is given up; the standings equal a clean run's."""
    problem = netns_problem()
    if problem is not None:
        pytest.skip(f"network namespaces unavailable: {problem}")
    tag = unique("quar")
    coord = tmp_path / "coordinator"
    config = write_config(coord, "quar", entrants=4, sleep=0.05, tag=tag)
    inline = tourney("run", config, "--inline", "--no-progress", "--run-dir", coord / "inline", cwd=coord)
    assert inline.returncode == 0, inline.stderr
    run_dir = coord / "runs" / "quar"
    worker_root = tmp_path_factory.mktemp("machines")
    try:
        ctx = machines(3)
        hosts = ctx.__enter__()
    except NetnsUnavailable as e:
        pytest.skip(f"network namespaces unavailable: {e}")
    server = None
    proc: Running | None = None
    broken: subprocess.Popen[bytes] | None = None
    try:
        server = EmbeddedRedis(tmp_path / "redis", bind=["127.0.0.1", *(m.host_ip for m in hosts)]).start()
        log = coord / "run.log"
        organiser = Organiser(coord / "home")
        proc = start_tourney(
            "run",
            config,
            "--broker",
            server.url(),
            "--no-local-workers",
            "--no-progress",
            cwd=coord,
            log=log,
            extra_env=organiser.env(),
        )
        for i, m in enumerate(hosts):
            work = worker_root / f"m{i}"
            work.mkdir()
            key_file = organiser.enrol(f"{tag}-{i}", work / "worker.key")
            if i == 0:
                (work / "artifacts").write_text("not a directory\n")  # every match fails here
            started = m.popen(
                worker_argv(server.url(m.host_ip), f"{tag}-{i}", work, key_file),
                cwd=work,
                log=work / "worker.log",
                hide=[coord, SCAN],
                env=env(**private_tmp(work)),
            )
            if i == 0:
                broken = started
                wait_for(
                    lambda: any(r.attempt > 1 for r in store_rows(run_dir)), 60, "the broken worker to fail"
                )
        rc = proc.wait(150)
        assert rc == 0, log.read_text(errors="replace")[-4000:]
        assert broken is not None
        # quarantined by this run only (docs/fleet.md, "Quarantine binds"): the worker goes on
        # serving the organiser's other runs, it does not shut itself down as a revoked one does
        assert broken.poll() is None, "a run's quarantine stopped the worker"
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        for m in hosts:
            m.stop()
        ctx.__exit__(None, None, None)
        if server is not None:
            server.stop()
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        workers = store.meta()["workers"]
        quarantined = [e.detail for e in store.events("quarantined")]
    assert workers[f"{tag}-0"]["quarantined"] is True, workers
    assert workers[f"{tag}-0"]["accepted"] == 0 and workers[f"{tag}-0"]["system_errors"] >= 3
    assert quarantined and quarantined[0].startswith(f"{tag}-0")
    assert all(r.failures == 0 for r in rows), [(r.match_id, r.failures) for r in rows]  # no attempt spent
    assert {r.worker for r in rows} <= {f"{tag}-1", f"{tag}-2"}
    broken_log = (worker_root / "m0" / "worker.log").read_text(errors="replace")
    assert "quarantined by the coordinator" not in broken_log  # the revoked worker's stop: not this
    told = broken_log.find("quarantined (")
    if told >= 0:  # it took tasks of the run once told: it passed each on, unplayed
        assert "played " not in broken_log[told:], broken_log[told:][-2000:]
    assert "QUARANTINED" in log.read_text(errors="replace")  # the live progress said so
    shown = tourney("standings", run_dir, cwd=coord)
    assert shown.returncode == 0 and f"Worker {tag}-0 QUARANTINED" in shown.stdout, shown.stdout
    assert f"worker {tag}-0 QUARANTINED" in (run_dir / "report.html").read_text()
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(coord / "inline")
    assert_nothing_left([tag, str(worker_root)])
