"""The submission server at the deadline (docs/submissions.md, docs/benchmarks.md).

Two lines, each against a real ``tourney serve`` (a subprocess: uvicorn, its embedded Redis and
its local worker, the contest's SQLite store), over real HTTP on loopback:

* ``submissions: 200 teams uploading 1 MiB at once: p95 upload latency S s, 0 lost``: 200
  teams (added to the store before the server starts), each sending one valid ICFP'98
  submission of 1 MiB (a ``src/`` file of random bytes: gzip cannot shrink it) through
  ``POST /api/submissions``, all started together from one asyncio client. The latency is each
  request's, from its start to its answer (received, stored by digest, unpacked, laid out,
  packed for the workers, recorded). *Lost* is every upload that was not answered ``201``, or
  that the store then does not hold as that team's version with that sha256 and its bytes in
  ``uploads/``. The checks of the uploads start on the worker as they land, as they would.
* ``submission checks, 2 workers / 1 worker: R``: K submissions uploaded at once to a server
  whose local worker checks 1 at a time, then one that checks 2 at a time; checks per second
  from the first upload to the last check read (after a warm-up of one check per slot, so the
  worker is up and each slot has started a sandbox), in pairs alternating which goes first,
  the median ratio over pairs. A check is the submission's build and one smoke game against
  the house entry in the sandbox (ICFP'98's ``runme`` is a process per move).

The machine is shared: the load average is printed beside each figure.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

from runner.domain.fleet import HOME_ENV
from runner.submissions.contest_dir import ContestDir
from runner.submissions.store import SubmissionStore

ROOT = Path(__file__).resolve().parents[1]
README = b"Pousse, greedy\nJane Doe <jane@example.org>\n"
GREEDY = (ROOT / "entries" / "pousse" / "greedy" / "main.py").read_bytes()
RUNME = b'#!/bin/sh\nexec python3 src/main.py "$@"\n'
MIB = 1024 * 1024


def _sandbox_problem() -> str | None:
    from workers.sandbox import HostError, host_factory

    try:
        host_factory("bwrap")
    except HostError as e:
        return str(e)
    return None


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f} on {os.cpu_count()} cores"


def submission(extra: bytes = b"") -> bytes:
    """A valid ICFP'98 submission (the greedy sample behind ``runme``), ``extra`` as ``src/blob``."""
    buf = io.BytesIO()
    files = {"runme": (RUNME, 0o755), "readme": (README, 0o644), "src/main.py": (GREEDY, 0o644)}
    if extra:
        files["src/blob"] = (extra, 0o644)
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(tmp: Path, max_bytes: int) -> Path:
    text = (ROOT / "configs" / "icfp98.yaml").read_text().replace("../entries/", f"{ROOT}/entries/")
    text = text.replace("deadline: 2027-08-29T23:59:59-04:00", "deadline: 2099-01-01T00:00:00+00:00")
    text = text.replace("  registration: closed", f"  registration: closed\n  dir: {tmp / 'contest'}")
    text = text.replace("  max_bytes: 10485760", f"  max_bytes: {max_bytes}")
    path = tmp / "contest.yaml"
    path.write_text(text)
    return path


@dataclass
class Served:
    url: str
    contest: ContestDir
    tokens: dict[str, str]
    pid: int

    def cpu_s(self) -> float:
        """The server process's own CPU seconds so far (its worker and Redis are other processes)."""
        t = psutil.Process(self.pid).cpu_times()
        return float(t.user + t.system)


@contextmanager
def serve(tmp: Path, teams: list[str], workers: int, max_bytes: int = 2 * MIB) -> Iterator[Served]:
    """A ``tourney serve`` of a fresh contest in ``tmp`` whose store holds ``teams``."""
    tmp.mkdir(parents=True)
    config = _config(tmp, max_bytes)
    contest = ContestDir(tmp / "contest").make()
    store = SubmissionStore(contest.store)
    tokens = {team: store.add_team(team, [f"{team}@example.org"]) for team in teams}
    store.close()
    port = _free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env[HOME_ENV] = str(tmp / "organiser")  # the bench's own organiser key and enrolled worker
    env["TMPDIR"] = str(tmp / "tmp")
    (tmp / "tmp").mkdir()
    argv = [sys.executable, "-m", "runner.cli", "serve", str(config), "--port", str(port)]
    log = open(tmp / "serve.log", "wb")  # noqa: SIM115 (open for the server's life)
    proc = subprocess.Popen([*argv, "--workers", str(workers)], cwd=tmp, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"tourney serve exited: {(tmp / 'serve.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/api/status", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("tourney serve did not answer within 120 s")
            time.sleep(0.2)
        yield Served(url, contest, tokens, proc.pid)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        log.close()


async def _upload_all(url: str, uploads: dict[str, tuple[str, bytes]]) -> dict[str, tuple[float, int, str]]:
    """Every team's upload at once: team -> (latency s, HTTP status or 0 when unanswered, detail)."""
    limits = httpx.Limits(max_connections=len(uploads) + 8, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(600.0)) as client:

        async def one(team: str, token: str, blob: bytes) -> tuple[str, tuple[float, int, str]]:
            start = time.perf_counter()
            try:
                answer = await client.post(
                    f"{url}/api/submissions",
                    headers={"Authorization": f"Bearer {token}"},
                    files={"file": ("submission.tar.gz", blob)},
                )
            except httpx.HTTPError as e:
                return team, (time.perf_counter() - start, 0, f"{type(e).__name__}: {e}")
            return team, (time.perf_counter() - start, answer.status_code, answer.text[:200])

        got = await asyncio.gather(*(one(team, token, blob) for team, (token, blob) in uploads.items()))
    return dict(got)


def _landed(contest: ContestDir, sent: dict[str, str]) -> int:
    """How many of ``sent`` (team -> sha256) the store holds as that team's version 1, with the
    upload's bytes under ``uploads/``."""
    with sqlite3.connect(contest.store) as db:
        rows = db.execute("SELECT team, version, upload_digest FROM submissions").fetchall()
    held = {team: digest for team, version, digest in rows if version == 1}
    return sum(
        1
        for team, digest in sent.items()
        if held.get(team) == digest and (contest.uploads / digest).is_file()
    )


def upload_line(tmp: Path, teams: int, size: int) -> str:
    names = [f"team{i:03d}" for i in range(teams)]
    blobs = {team: submission(os.urandom(size)) for team in names}
    with serve(tmp, names, workers=1, max_bytes=2 * size) as served:
        load = _load()
        cpu = served.cpu_s()
        answers = asyncio.run(_upload_all(served.url, {t: (served.tokens[t], blobs[t]) for t in names}))
        cpu = served.cpu_s() - cpu
        sent = {t: hashlib.sha256(blobs[t]).hexdigest() for t in names}
        landed = _landed(served.contest, sent)
    ok = [t for t, (_, status, _) in answers.items() if status == 201]
    unanswered = [t for t, (_, status, _) in answers.items() if status == 0]
    lost = teams - min(landed, len(ok))
    latencies = sorted(lat for lat, _, _ in answers.values())
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    line = (
        f"submissions: {teams} teams uploading {size / MIB:g} MiB at once: p95 upload latency {p95:.2f} s, "
        f"{lost} lost ({len(ok)} answered 201, {len(unanswered)} unanswered, {landed} in the store; "
        f"median {statistics.median(latencies):.2f} s, max {latencies[-1]:.2f} s; "
        f"the server's CPU {1000 * cpu / teams:.0f} ms an upload; {load} before)"
    )
    refused = [f"{t}: {status} {detail}" for t, (_, status, detail) in answers.items() if status != 201]
    if refused:
        line += "\n  not 201: " + "; ".join(refused[:3])
    return line


def _settled(contest: ContestDir, teams: list[str]) -> dict[str, str]:
    with sqlite3.connect(contest.store) as db:
        rows = db.execute("SELECT team, state FROM submissions").fetchall()
    return {team: state for team, state in rows if team in teams and state != "checking"}


def checks_per_s(tmp: Path, workers: int, count: int) -> tuple[float, int]:
    """Checks per second of ``count`` submissions uploaded at once to a server checking
    ``workers`` at a time, and how many of them came out ready."""
    warm = [f"warm{i}" for i in range(workers)]
    teams = [f"team{i:02d}" for i in range(count)]
    with serve(tmp, [*warm, *teams], workers=workers) as served:
        asyncio.run(_upload_all(served.url, {t: (served.tokens[t], submission()) for t in warm}))
        _wait(served.contest, warm, 300)
        blobs = {t: (served.tokens[t], submission()) for t in teams}
        start = time.perf_counter()
        answers = asyncio.run(_upload_all(served.url, blobs))
        if any(status != 201 for _, status, _ in answers.values()):
            raise RuntimeError(f"an upload was refused: {answers}")
        states = _wait(served.contest, teams, 600)
        elapsed = time.perf_counter() - start
    return count / elapsed, sum(1 for s in states.values() if s == "ready")


def _wait(contest: ContestDir, teams: list[str], timeout: float) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while True:
        states = _settled(contest, teams)
        if len(states) == len(teams):
            return states
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(teams) - len(states)} check(s) not done within {timeout:.0f} s")
        time.sleep(0.1)


def checks_line(tmp: Path, count: int, pairs: int) -> str:
    ratios: list[float] = []
    rates: dict[int, list[float]] = {1: [], 2: []}
    not_ready = 0
    loads = []
    for pair in range(pairs):
        order = (1, 2) if pair % 2 == 0 else (2, 1)
        got: dict[int, float] = {}
        for workers in order:
            loads.append(os.getloadavg()[0])
            rate, ready = checks_per_s(tmp / f"checks-{pair}-{workers}", workers, count)
            got[workers] = rate
            rates[workers].append(rate)
            not_ready += count - ready
        ratios.append(got[2] / got[1])
    ratio = statistics.median(ratios)
    line = (
        f"submission checks, 2 workers / 1 worker: {ratio:.2f} "
        f"({count} checks a run, {pairs} pair(s): "
        + ", ".join(f"{r:.2f}" for r in ratios)
        + f"; {statistics.median(rates[1]):.2f} and {statistics.median(rates[2]):.2f} checks/s; "
        f"load {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores)"
    )
    if not_ready:
        line += f"\n  {not_ready} check(s) did not come out ready: the figure measures failures too"
    return line


def main(quick: bool = False) -> None:
    problem = _sandbox_problem()
    if problem is not None:
        print(f"submissions: skipped (no sandbox: {problem})")
        return
    with tempfile.TemporaryDirectory(prefix="tourney-bench-submissions-") as d:
        tmp = Path(d)
        print(upload_line(tmp / "uploads", teams=200, size=MIB), flush=True)
        print(checks_line(tmp, count=4 if quick else 10, pairs=1 if quick else 3), flush=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
