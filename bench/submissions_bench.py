"""The submission server at the deadline (docs/submissions.md, docs/benchmarks.md).

Two lines, each against a real ``tourney serve`` (a subprocess: uvicorn, its intake pool, its
embedded Redis and its local worker, the contest's SQLite store), over real HTTP on loopback:

* ``submissions: 200 teams uploading 1 MiB at once: p95 upload latency S s, 0 lost``: 200
  teams (added to the store before the server starts), each sending one valid ICFP'98
  submission of 1 MiB (a ``src/`` file of random bytes: gzip cannot shrink it) through
  ``POST /api/submissions``, all started together. The latency is each request's, from opening
  its connection to its whole answer (the server answers at "received": the bytes stored
  durably by digest, the version recorded). *Lost* is every upload that was not answered
  ``201``, or that the store then does not hold as that team's version with that sha256 and
  its bytes in ``uploads/``. Then the bench waits for the intake pool to unpack and lay out
  every one (each must come out with its entry, none refused) and says when it had. CPU is
  printed per upload three ways: the server process's own (what an answer costs), the intake
  pool's processes' (unpacking, layout, packing; at ``nice`` 10), and the bench client's.
  The checks of the uploads start on the worker as they land, as they would.

  The client stands for 200 contestants' machines, so it is lean: raw asyncio streams, each
  request's multipart body built before the clock starts, one connection per upload
  (``Connection: close``), so that its own CPU on this host is small and printed.
* ``submission checks, 2 workers / 1 worker: R``: K submissions uploaded at once to a server
  whose local worker checks 1 at a time, then one that checks 2 at a time (after a warm-up of
  one check per slot, so the worker is up and each slot has started a sandbox), in pairs
  alternating which goes first, the median ratio over pairs (each pair's printed). A check is
  the submission's build and one smoke game against the house entry in the sandbox (ICFP'98's
  ``runme`` is a process per move). The rate is the workers' throughput: checks per second
  from the moment the first submission was laid out (its check could start: the store's
  ``layout`` step) to the last check's end. The time before that, the first upload and its
  unpacking, is the same whatever the workers (it is the upload line's matter), and with a
  few checks a run it alone pulled the ratio from 1.76 to 1.46. The whole window, from the
  first upload to the last check read, is printed beside it as ``from the first upload``.

The machine is shared: the load average is printed beside each figure.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import os
import secrets
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
from urllib.parse import urlsplit

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


def multipart(blob: bytes, filename: str = "submission.tar.gz") -> tuple[bytes, str]:
    """``blob`` as the multipart form ``curl -F file=@FILE`` sends: the body and its content type."""
    boundary = secrets.token_hex(16)
    head = (
        f"--{boundary}\r\n"
        f'Content-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head + blob + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


async def _post(url: str, token: str, body: bytes, content_type: str) -> tuple[int, str]:
    """One ``POST /api/submissions`` over its own connection: (status, the answer's text)."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(
            (
                f"POST /api/submissions HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                f"Authorization: Bearer {token}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            ).encode()
        )
        writer.write(body)
        await writer.drain()
        status_line = await reader.readline()
        length = None
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        text = await (reader.readexactly(length) if length is not None else reader.read())
        return int(status_line.split()[1]), text.decode(errors="replace")
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _upload_all(url: str, uploads: dict[str, tuple[str, bytes]]) -> dict[str, tuple[float, int, str]]:
    """Every team's upload at once: team -> (latency s, HTTP status or 0 when unanswered, detail)."""
    bodies = {team: (token, *multipart(blob)) for team, (token, blob) in uploads.items()}

    async def one(team: str, token: str, body: bytes, ctype: str) -> tuple[str, tuple[float, int, str]]:
        start = time.perf_counter()
        try:
            status, text = await asyncio.wait_for(_post(url, token, body, ctype), 600)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError, IndexError) as e:
            return team, (time.perf_counter() - start, 0, f"{type(e).__name__}: {e}")
        return team, (time.perf_counter() - start, status, text[:200])

    got = await asyncio.gather(*(one(team, *sent) for team, sent in bodies.items()))
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


def _pool_cpu_s(server_pid: int) -> float:
    """CPU seconds of the server's intake pool (its spawned processes; not Redis nor the worker)."""
    total = 0.0
    for child in psutil.Process(server_pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if any("spawn_main" in arg for arg in child.cmdline()):
                t = child.cpu_times()
                total += t.user + t.system
    return total


def _unpacked(contest: ContestDir) -> tuple[int, int, int]:
    """How many rows are (waiting to be unpacked, unpacked with an entry, refused)."""
    with sqlite3.connect(contest.store) as db:
        rows = db.execute("SELECT state, entry_digest FROM submissions").fetchall()
    waiting = sum(1 for state, digest in rows if state == "checking" and digest is None)
    refused = sum(1 for state, _ in rows if state == "refused")
    return waiting, len(rows) - waiting - refused, refused


def upload_line(tmp: Path, teams: int, size: int) -> str:
    names = [f"team{i:03d}" for i in range(teams)]
    blobs = {team: submission(os.urandom(size)) for team in names}
    with serve(tmp, names, workers=1, max_bytes=2 * size) as served:
        time.sleep(2.0)  # the intake pool's processes up and warm, as a server long up has them
        load = _load()
        cpu, pool_cpu, client_cpu = served.cpu_s(), _pool_cpu_s(served.pid), time.process_time()
        start = time.perf_counter()
        answers = asyncio.run(_upload_all(served.url, {t: (served.tokens[t], blobs[t]) for t in names}))
        answered_s = time.perf_counter() - start
        cpu, client_cpu = served.cpu_s() - cpu, time.process_time() - client_cpu
        load_after = _load()
        sent = {t: hashlib.sha256(blobs[t]).hexdigest() for t in names}
        landed = _landed(served.contest, sent)
        deadline = time.monotonic() + 600
        while (counts := _unpacked(served.contest))[0] and time.monotonic() < deadline:
            time.sleep(0.05)
        unpacked_s = time.perf_counter() - start
        pool_cpu = _pool_cpu_s(served.pid) - pool_cpu
    ok = [t for t, (_, status, _) in answers.items() if status == 201]
    unanswered = [t for t, (_, status, _) in answers.items() if status == 0]
    lost = teams - min(landed, len(ok))
    latencies = sorted(lat for lat, _, _ in answers.values())
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    waiting, unpacked, refused = counts
    line = (
        f"submissions: {teams} teams uploading {size / MIB:g} MiB at once: p95 upload latency {p95:.2f} s, "
        f"{lost} lost ({len(ok)} answered 201, {len(unanswered)} unanswered, {landed} in the store; "
        f"median {statistics.median(latencies):.2f} s, max {latencies[-1]:.2f} s, all answered in "
        f"{answered_s:.2f} s; CPU an upload: the server's {1000 * cpu / teams:.1f} ms, the intake pool's "
        f"{1000 * pool_cpu / teams:.1f} ms, the client's {1000 * client_cpu / teams:.1f} ms; "
        f"{unpacked} unpacked, {refused} refused, {waiting} still waiting {unpacked_s:.1f} s after the "
        f"first upload; {load} before, {load_after.split(' on')[0]} after)"
    )
    not_201 = [f"{t}: {status} {detail}" for t, (_, status, detail) in answers.items() if status != 201]
    if not_201:
        line += "\n  not 201: " + "; ".join(not_201[:3])
    return line


def _settled(contest: ContestDir, teams: list[str]) -> dict[str, str]:
    with sqlite3.connect(contest.store) as db:
        rows = db.execute("SELECT team, state FROM submissions").fetchall()
    return {team: state for team, state in rows if team in teams and state != "checking"}


@dataclass(frozen=True)
class ChecksRun:
    """One run of checks: its throughput (module doc), the whole window's, how many came out ready."""

    rate: float
    from_upload: float
    ready: int


def _check_window(contest: ContestDir, teams: list[str]) -> tuple[float, float]:
    """When the first of ``teams``' checks could start (its ``layout`` step) and the last ended."""
    marks = ",".join("?" * len(teams))
    with sqlite3.connect(contest.store) as db:
        first, last = db.execute(
            "SELECT MIN(CASE WHEN st.step = 'layout' THEN st.at END), MAX(st.at) FROM steps st "
            f"JOIN submissions su ON su.id = st.submission WHERE su.team IN ({marks})",
            teams,
        ).fetchone()
    return float(first), float(last)


def checks_per_s(tmp: Path, workers: int, count: int) -> ChecksRun:
    """``count`` submissions uploaded at once to a server checking ``workers`` at a time."""
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
        first, last = _check_window(served.contest, teams)
    ready = sum(1 for s in states.values() if s == "ready")
    return ChecksRun(count / max(last - first, 1e-3), count / elapsed, ready)


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
    whole: list[float] = []
    rates: dict[int, list[float]] = {1: [], 2: []}
    not_ready = 0
    loads = []
    for pair in range(pairs):
        order = (1, 2) if pair % 2 == 0 else (2, 1)
        got: dict[int, ChecksRun] = {}
        for workers in order:
            loads.append(os.getloadavg()[0])
            run = got[workers] = checks_per_s(tmp / f"checks-{pair}-{workers}", workers, count)
            rates[workers].append(run.rate)
            not_ready += count - run.ready
        ratios.append(got[2].rate / got[1].rate)
        whole.append(got[2].from_upload / got[1].from_upload)
    ratio = statistics.median(ratios)
    line = (
        f"submission checks, 2 workers / 1 worker: {ratio:.2f} "
        f"({count} checks a run, {pairs} pair(s): "
        + ", ".join(f"{r:.2f}" for r in ratios)
        + f"; {statistics.median(rates[1]):.2f} and {statistics.median(rates[2]):.2f} checks/s; "
        f"from the first upload {statistics.median(whole):.2f}; "
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
        print(checks_line(tmp, count=6 if quick else 16, pairs=1 if quick else 3), flush=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
