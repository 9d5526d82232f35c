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

from runner.redis_server import EmbeddedRedis
from runner.signing import RunKey, write_key_file
from runner.store import RunStore
from tests.integration.helpers import (
    SCAN,
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
from tests.integration.netns import NetnsUnavailable, machines, netns_problem


def worker_argv(url: str, name: str, work: Path, key_file: Path) -> list[str]:
    """A remote worker: its own copy of the run key (0600), and the organiser's consent to the
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
    proc: subprocess.Popen[bytes] | None = None
    try:
        server = EmbeddedRedis(tmp_path / "redis", bind=["127.0.0.1", *(m.host_ip for m in hosts)]).start()
        log = coord / "run.log"
        key = RunKey.generate()
        proc = start_tourney(
            "run",
            config,
            "--broker",
            server.url(),
            "--no-local-workers",
            "--no-progress",
            cwd=coord,
            log=log,
            extra_env={"TOURNEY_RUN_KEY": key.hex()},
        )
        hide = [coord, SCAN]  # nothing of the coordinator's files is visible to the workers
        for i, m in enumerate(hosts):
            if i == 1:  # the second worker joins mid-run
                wait_for(lambda: any(r.state == "done" for r in store_rows(run_dir)), 60, "a first result")
            work = worker_root / f"m{i}"
            work.mkdir()
            write_key_file(work / "run.key", key)
            m.popen(
                worker_argv(server.url(m.host_ip), f"ns-{i}", work, work / "run.key"),
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
