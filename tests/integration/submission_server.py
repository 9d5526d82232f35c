"""A real ``tourney serve`` for the integration tests: its config (ICFP'98's rules, a
contest directory under the test's tmp), archives, and a ``Server`` to talk to over HTTP
(docs/submissions.md). Used by the server's, the browser's and the live run view's tests."""

from __future__ import annotations

import contextlib
import io
import signal
import socket
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.forked_cli import Running
from tests.integration.helpers import ROOT, assert_nothing_left, start_tourney, tourney, wait_for

README = b"Pousse, greedy\nJane Doe <jane@example.org>\n"
GREEDY = (ROOT / "entries" / "pousse" / "greedy" / "main.py").read_bytes()
RUNME = b'#!/bin/sh\nexec python3 src/main.py "$@"\n'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def contest_config(
    tmp: Path, deadline: str, name: str = "contest.yaml", *, from_submissions: bool = False
) -> Path:
    text = (ROOT / "configs" / "icfp98.yaml").read_text()
    text = text.replace("../entries/", f"{ROOT}/entries/")
    if from_submissions:  # the teams' counting versions play; the house entry is a seed opponent
        start, end = text.index("entries:\n"), text.index("stages:\n")
        text = (
            text[:start]
            + "entries: {from: submissions}\n"
            + f"seed_opponents:\n  - path: {ROOT}/entries/pousse/greedy\n    include: [greedy]\n"
            + text[end:]
        )
    text = text.replace("deadline: 2027-08-29T23:59:59-04:00", f"deadline: {deadline}")
    text = text.replace("  registration: closed", f"  registration: closed\n  dir: {tmp / 'contest'}")
    text = text.replace(
        "  max_bytes: 10485760", "  max_bytes: 262144\n  rate_limit: {uploads: 10, per_s: 600}"
    )
    text = text.replace("advance: {top: 6}", "advance: {top: 2}")  # a contest of a few test teams
    path = tmp / name
    path.write_text(text)
    return path


def targz(files: dict[str, tuple[bytes, int]], *, special: list[tarfile.TarInfo] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            t.addfile(info, io.BytesIO(data))
        for info in special or []:
            t.addfile(info)
    return buf.getvalue()


GOOD = {"runme": (RUNME, 0o755), "readme": (README, 0o644), "src/main.py": (GREEDY, 0o644)}


@dataclass
class Server:
    url: str
    tmp: Path
    config: Path
    proc: Running
    log: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def team(self, name: str) -> str:
        done = tourney(
            "team", "add", name, "--email", f"{name}@example.org", "--config", self.config, cwd=self.tmp
        )
        assert done.returncode == 0, done.stderr
        self.tokens[name] = done.stdout.splitlines()[1]
        return self.tokens[name]

    def upload(self, token: str, blob: bytes, name: str = "sub.tar.gz") -> httpx.Response:
        return httpx.post(
            f"{self.url}/api/submissions",
            headers={"Authorization": f"Bearer {token}"},
            files={"file": (name, blob)},
            timeout=60,
        )

    def get(self, token: str, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)

    def settled(self, token: str, version: int, timeout: float = 120) -> dict[str, Any]:
        got: dict[str, Any] = {}

        def done() -> bool:
            got.update(self.get(token, f"/api/submissions/{version}").json())
            return got.get("state") not in (None, "checking")

        wait_for(done, timeout, f"the checks of version {version}", every=0.3)
        return got


def start_server(tmp: Path, config: Path, port: int, log: Path) -> Running:
    proc = start_tourney("serve", config, "--port", str(port), "--workers", "1", cwd=tmp, log=log)

    def up() -> bool:
        assert proc.poll() is None, log.read_text()
        try:
            return httpx.get(f"http://127.0.0.1:{port}/api/status", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(up, 90, "the server to answer")
    return proc


@contextlib.contextmanager
def serving(tmp: Path, deadline: str = "2099-01-01T00:00:00+00:00") -> Iterator[Server]:
    """A server of a fresh contest in ``tmp``, stopped (and its processes checked gone) after."""
    config = contest_config(tmp, deadline)
    port = free_port()
    log = tmp / "serve.log"
    served = Server(f"http://127.0.0.1:{port}", tmp, config, start_server(tmp, config, port, log), log)
    try:
        yield served
    finally:
        served.stop()  # a test may have restarted it: the one running now
    assert_nothing_left([str(tmp)])
