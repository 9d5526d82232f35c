"""``tourney serve`` for real: a server process over real HTTP, its embedded Redis, a real worker
building and playing every check in the sandbox (docs/submissions.md).

One server serves the module (starting one takes seconds); the tests use their own teams so
that none depends on another's uploads, and the last one kills the server mid-check and starts
it again after the deadline.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import io
import json
import os
import signal
import tarfile
import threading
import time
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import tourney, wait_for
from tests.integration.submission_server import (
    GOOD,
    README,
    RUNME,
    Server,
    contest_config,
    free_port,
    serving,
    start_server,
    targz,
)

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("serve")) as served:
        yield served


def test_a_good_upload_is_built_plays_its_smoke_game_and_counts(server: Server) -> None:
    token = server.team("alpha")
    answer = server.upload(token, targz(GOOD))
    assert answer.status_code == 201, answer.text
    assert answer.json()["version"] == 1
    got = server.settled(token, 1)
    steps = {s["step"]: s for s in got["steps"]}
    assert got["state"] == "ready" and got["counts"], got
    assert [s["step"] for s in got["steps"]] == ["received", "unpacked", "layout", "built", "smoke", "ready"]
    assert "move(s)" in steps["smoke"]["detail"]
    board = httpx.get(f"{server.url}/api/status").json()
    (row,) = [r for r in board["teams"] if r["team"] == "alpha"]
    assert row == {"team": "alpha", "versions": 1, "last": row["last"], "counting": 1, "ready": True}
    page = httpx.get(f"{server.url}/").text
    assert "alpha" in page and "alpha@example.org" not in page  # the board holds no email
    assert board["left"].endswith("left") and board["deadline"].startswith("2099-01-01")


def test_a_build_error_is_quoted_and_its_log_is_one_click_away(server: Server) -> None:
    token = server.team("bravo")
    bad = {
        "runme": (b"#!/bin/sh\nexec ./a.out\n", 0o755),
        "readme": (README, 0o644),
        "src/main.c": (b"int main(void) { return undefined_thing; }\n", 0o644),
        "src/Makefile": (b"all:\n\tcc -o ../a.out main.c\n", 0o644),
    }
    assert server.upload(token, targz(bad)).status_code == 201
    got = server.settled(token, 1)
    assert got["state"] == "failed" and not got["counts"]
    assert "undefined_thing" in got["first_error"] and "error" in got["first_error"]
    steps = {s["step"]: s["status"] for s in got["steps"]}
    assert steps["built"] == "failed" and steps["smoke"] == "skipped"
    with httpx.Client(base_url=server.url) as browser:
        _sign_in(browser, token)
        log = browser.get(got["build_log_url"])
        assert log.status_code == 200 and "undefined_thing" in log.text and "make -s -C src" in log.text


def _sign_in(browser: httpx.Client, token: str) -> None:
    form = browser.get("/login").text
    csrf = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    answer = browser.post("/login", data={"token": token, "csrf": csrf})
    assert answer.status_code == 303, answer.text


def _special(name: str, kind: bytes, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def test_hostile_archives_are_refused_with_one_line_and_write_nothing_outside(server: Server) -> None:
    token = server.team("hostile")
    marker = f"escaped-{uuid.uuid4().hex[:8]}"
    huge = tarfile.TarInfo("big")
    huge.size = 40 * 1024**3
    truncated = targz({**GOOD, "src/blob": (os.urandom(60_000), 0o644)})[:30_000]
    cases: list[tuple[bytes, str]] = [
        (targz({**GOOD, f"../../{marker}": (b"x", 0o644)}), "'..'"),
        (targz({**GOOD, f"/tmp/{marker}": (b"x", 0o644)}), "absolute path"),
        (targz(GOOD, special=[_special("src/link", tarfile.SYMTYPE, "/etc/shadow")]), "symbolic link"),
        (targz(GOOD, special=[_special("src/hard", tarfile.LNKTYPE, "runme")]), "hard link"),
        (targz(GOOD, special=[_special("src/dev", tarfile.CHRTYPE)]), "device"),
        (targz({**GOOD, "src/zeros": (b"\0" * (3 * 1024 * 1024), 0o644)}), "would exceed"),  # a gzip bomb
        (huge.tobuf(format=tarfile.GNU_FORMAT) + b"\0" * 1024, "would exceed"),  # a header claiming 40 GiB
        (truncated, "truncated"),
    ]
    # each is answered at "received" (stored by digest, recorded), then refused by its unpacking
    for version, (blob, _) in enumerate(cases, 1):
        answer = server.upload(token, blob)
        body = answer.json()
        assert answer.status_code == 201, body
        assert body["version"] == version and body["state"] == "checking" and not body["counts"], body
        assert answer.headers["location"] == body["api_url"] == f"/api/submissions/{version}"
        so_far = [(s["step"], s["status"]) for s in body["steps"]]
        assert so_far == [("received", "ok"), ("unpacked", "running")], so_far
    for version, (_, said) in enumerate(cases, 1):
        got = server.settled(token, version)
        assert got["state"] == "refused" and not got["counts"], got
        assert said in got["failure"] and "\n" not in got["failure"], got["failure"]
        steps = {s["step"]: s for s in got["steps"]}
        assert steps["unpacked"]["status"] == "failed" and steps["unpacked"]["detail"] == got["failure"]
        assert "layout" not in steps and "built" not in steps  # never laid out, never sent to a worker
    # what the first bytes refuse is refused at once: no archive of a known format
    text = server.upload(token, b"just some text, not an archive\n", "notes.tgz")
    assert text.status_code == 422 and text.json()["state"] == "refused", text.text
    assert "not a .tar.gz, .tgz, .tar or .zip archive" in text.json()["failure"]
    assert [s["status"] for s in text.json()["steps"]] == ["ok", "failed"]
    assert not list(server.tmp.parent.rglob(f"*{marker}*")) and not Path(f"/tmp/{marker}").exists()
    contest = server.tmp / "contest"
    assert not any((contest / "incoming").iterdir())  # no half-unpacked debris
    # the refused versions never count
    (row,) = [r for r in httpx.get(f"{server.url}/api/status").json()["teams"] if r["team"] == "hostile"]
    assert row["versions"] == len(cases) + 1 and row["counting"] is None
    # the team's page of a refused version shows its failed step, in one line
    with httpx.Client(base_url=server.url) as browser:
        _sign_in(browser, token)
        page = browser.get("/team/v/1").text
        assert 'data-step="unpacked" data-status="failed"' in page and "a path with &#39;..&#39;" in page
    # and tourney submit waits for the steps and prints the failed one
    hostile = server.tmp / "hostile.tar.gz"
    hostile.write_bytes(cases[2][0])  # the symbolic link
    token_file = server.tmp / "hostile.token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    done = tourney("submit", server.url, hostile, "--token-file", token_file, cwd=server.tmp)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "unpacked  failed" in done.stdout and "symbolic link" in done.stdout, done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("refused: "), done.stdout


def test_tokens_another_teams_and_revoked(server: Server) -> None:
    charlie = server.team("charlie")
    delta = server.team("delta")
    assert server.upload(charlie, targz(GOOD)).status_code == 201
    # delta asking for version 1 gets its own (none), never charlie's
    assert server.get(delta, "/api/submissions/1").status_code == 404
    listed = server.get(delta, "/api/submissions").json()["submissions"]
    assert listed == []
    assert tourney("team", "revoke", "delta", "--config", server.config, cwd=server.tmp).returncode == 0
    refused = server.upload(delta, targz(GOOD))
    assert refused.status_code == 401 and "revoked" in refused.json()["error"]
    forged = charlie[:-4] + ("AAAA" if not charlie.endswith("AAAA") else "BBBB")
    assert server.upload(forged, targz(GOOD)).status_code == 401
    assert httpx.post(f"{server.url}/api/submissions", files={"file": ("x.tgz", b"x")}).status_code == 401


def test_an_oversized_request_is_refused_before_it_is_read(server: Server) -> None:
    token = server.team("echo")
    answer = server.upload(token, os.urandom(400 * 1024))
    assert answer.status_code == 413 and "larger than" in answer.text
    assert server.get(token, "/api/submissions").json()["submissions"] == []


def test_a_form_post_without_its_csrf_token_is_refused(server: Server) -> None:
    token = server.team("foxtrot")
    with httpx.Client(base_url=server.url) as browser:
        _sign_in(browser, token)
        answer = browser.post("/team/upload", files={"file": ("sub.tgz", targz(GOOD))})
        assert answer.status_code == 403 and "CSRF" in answer.text
        page = browser.get("/team").text
        csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        answer = browser.post("/team/upload", data={"csrf": csrf}, files={"file": ("sub.tgz", targz(GOOD))})
        assert answer.status_code == 303 and answer.headers["location"] == "/team/v/1"
    assert [s["version"] for s in server.get(token, "/api/submissions").json()["submissions"]] == [1]


def test_fifty_concurrent_uploads_of_one_team_meet_the_rate_limit(server: Server) -> None:
    token = server.team("golf")
    blob = targz({"runme": (RUNME, 0o755), "readme": (README, 0o644)})  # refused at layout: no worker needed
    with concurrent.futures.ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(lambda _: server.upload(token, blob), range(50)))
    codes = sorted(a.status_code for a in answers)
    assert codes.count(201) == 10 and codes.count(429) == 40, codes
    limited = next(a for a in answers if a.status_code == 429)
    assert int(limited.headers["Retry-After"]) >= 1 and "try again in" in limited.json()["error"]
    versions = [s["version"] for s in server.get(token, "/api/submissions").json()["submissions"]]
    assert versions == list(range(1, 11))  # every accepted upload landed, in order, no gaps
    for version in versions:  # and each was refused by its layout, after its answer
        got = server.settled(token, version)
        assert got["state"] == "refused" and "src/" in got["failure"], got


def test_tourney_submit_packs_a_directory_and_prints_each_check(server: Server) -> None:
    token = server.team("hotel")
    token_file = server.tmp / "hotel.token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    entry = server.tmp / "hotel-entry"
    for name, (data, mode) in GOOD.items():
        (entry / name).parent.mkdir(parents=True, exist_ok=True)
        (entry / name).write_bytes(data)
        (entry / name).chmod(mode)
    done = tourney("submit", server.url, entry, "--token-file", token_file, cwd=server.tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    for step in ("received", "unpacked", "layout", "built", "smoke"):
        assert step in done.stdout
    assert done.stdout.rstrip().endswith("ready")


def test_freeze_writes_each_teams_counting_submission_by_digest(server: Server) -> None:
    wait_for(
        lambda: all(
            r["ready"]
            for r in httpx.get(f"{server.url}/api/status").json()["teams"]
            if r["team"] in ("alpha", "hotel")
        ),
        120,
        "alpha and hotel ready",
    )
    done = tourney("freeze", server.config, "--force", cwd=server.tmp)
    assert done.returncode == 0, done.stderr
    frozen = server.config.with_name("contest.frozen.yaml").read_text()
    digests = {line.split()[0]: line.split()[-1] for line in done.stdout.splitlines() if " v" in line}
    assert set(digests) >= {"alpha", "hotel", "charlie", "foxtrot"} and "bravo" not in digests
    for digest in digests.values():
        assert f"contest/entries/{digest}" in frozen
    # the run plays each team's counting submission, recorded by digest in its run directory
    run = tourney(
        "run", server.config.with_name("contest.frozen.yaml"), "--inline", "--no-progress", cwd=server.tmp
    )
    assert run.returncode == 0, run.stdout + run.stderr
    resolved = (server.tmp / "runs" / "icfp98" / "resolved.json").read_text()
    for team, digest in digests.items():
        assert team in resolved and digest in resolved


def test_a_config_of_entries_from_submissions_runs_each_teams_counting_version(server: Server) -> None:
    teams = ("alpha", "charlie", "foxtrot", "hotel")
    wait_for(
        lambda: all(
            r["ready"] for r in httpx.get(f"{server.url}/api/status").json()["teams"] if r["team"] in teams
        ),
        120,
        "the teams' checks",
    )
    mine = {team: _counting(server, team) for team in teams}
    past = "2020-01-01T00:00:00+00:00"
    config = contest_config(server.tmp, past, "from-submissions.yaml", from_submissions=True)
    validated = tourney("validate", config, cwd=server.tmp)
    assert validated.returncode == 0 and "entries from submissions" in validated.stdout, validated.stdout
    run_dir = server.tmp / "runs" / "from-submissions"
    run = tourney("run", config, "--inline", "--no-progress", "--run-dir", run_dir, cwd=server.tmp)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "playing each team's counting submission" in run.stdout
    # each team plays its counting version, recorded by digest in the run directory ...
    resolved = json.loads((run_dir / "resolved.json").read_text())
    played = {e["name"]: e["digest"] for e in resolved["entries"]}
    assert set(played) >= set(teams) and "bravo" not in played and "hostile" not in played
    for team in teams:
        assert played[team] == mine[team]["entry_digest"]
    # ... and the report names the submission each entry came from
    standings = json.loads((run_dir / "standings.json").read_text())
    for team in teams:
        assert standings["submissions"][team] == {
            "team": team,
            "version": mine[team]["version"],
            "upload_sha256": mine[team]["upload_sha256"],
            "entry_digest": mine[team]["entry_digest"],
        }
    report = (run_dir / "report.html").read_text()
    for team in teams:
        row = f'<tr data-entry="{team}"><td>{team}</td><td>{team}</td>'
        assert f'{row}<td class="num">v{mine[team]["version"]}</td>' in report
        assert mine[team]["entry_digest"][:16] in report
    ranked = {row["entry"] for row in standings["stages"][0]["standings"]}
    assert ranked == set(played)  # the teams played each other, not the house entry


def _counting(server: Server, team: str) -> dict[str, Any]:
    """The team's version that counts, as the team sees it."""
    listed: list[dict[str, Any]] = server.get(server.tokens[team], "/api/submissions").json()["submissions"]
    (counted,) = [s for s in listed if s["counts"]]
    return counted


def _pool_processes(server_pid: int) -> list[psutil.Process]:
    """The server's intake pool (its processes started by multiprocessing's spawn); the
    server's other children come and go meanwhile (a check's sandbox helpers)."""
    pool = []
    for child in psutil.Process(server_pid).children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            if any("spawn_main" in arg for arg in child.cmdline()):
                pool.append(child)
    return pool


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _streamed(token: str, boundary: str) -> dict[str, str]:
    """The headers of a multipart upload sent as a stream (chunked: no Content-Length)."""
    return {"Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"}


def test_a_zip_bomb_and_an_undeclared_oversized_body_are_refused(server: Server) -> None:
    token = server.team("juliett")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, (data, _) in GOOD.items():
            z.writestr(name, data)
        for i in range(6):  # 2.4 MiB of zeros in a few KiB: over the cap of 8 x max_bytes unpacked
            z.writestr(f"src/zeros{i}", b"\0" * (400 * 1024))
    answer = server.upload(token, buf.getvalue(), "bomb.zip")
    assert answer.status_code == 201, answer.text
    got = server.settled(token, 1)
    assert got["state"] == "refused" and "would exceed" in got["failure"], got
    # a chunked body, no Content-Length, running past the cap: cut at the cap, nothing kept
    boundary = "tourney-test-boundary"

    def body() -> Iterator[bytes]:
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.tgz"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        for _ in range(40):
            yield os.urandom(16 * 1024)  # 640 KiB in all, the cap is 256 KiB + the form's framing
        yield f"\r\n--{boundary}--\r\n".encode()

    try:
        cut = httpx.post(
            f"{server.url}/api/submissions",
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": f"multipart/form-data; boundary={boundary}",
            },
            content=body(),
            timeout=60,
        )
        assert cut.status_code == 413 and "larger than" in cut.text, cut.text
    except (httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadError):
        pass  # the server answered 413 and closed while the rest was still being sent
    assert [s["version"] for s in server.get(token, "/api/submissions").json()["submissions"]] == [1]
    assert not any((server.tmp / "contest" / "incoming").iterdir())


def test_malformed_upload_forms_are_refused_in_one_line_and_leave_nothing(server: Server) -> None:
    token = server.team("mike")
    auth = {"Authorization": f"Bearer {token}"}
    url = f"{server.url}/api/submissions"
    two_files = httpx.post(
        url, headers=auth, files=[("file", ("a.tgz", targz(GOOD))), ("file", ("b.tgz", targz(GOOD)))]
    )
    assert two_files.status_code == 400 and "one file" in two_files.json()["error"], two_files.text
    no_file = httpx.post(url, headers=auth, files={"note": (None, "hello")})
    assert no_file.status_code == 400 and "no file" in no_file.json()["error"], no_file.text
    raw = httpx.post(url, headers={**auth, "Content-Type": "application/gzip"}, content=targz(GOOD))
    assert raw.status_code == 400 and "multipart/form-data" in raw.json()["error"], raw.text
    boundary = "tourney-cut-form"
    cut = httpx.post(  # the file part never closed: the body ends inside it
        url,
        headers={**auth, "Content-Type": f"multipart/form-data; boundary={boundary}"},
        content=(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.tgz"\r\n\r\n'
        ).encode()
        + targz(GOOD),
    )
    assert cut.status_code == 400 and "no file" in cut.json()["error"], cut.text
    assert server.get(token, "/api/submissions").json()["submissions"] == []
    assert not any((server.tmp / "contest" / "incoming").iterdir())


def test_two_uploads_of_one_team_at_the_same_instant_land_as_two_versions(server: Server) -> None:
    token = server.team("kilo")
    blobs = [targz({**GOOD, "src/note.txt": (f"upload {i}\n".encode(), 0o644)}) for i in range(2)]
    together = threading.Barrier(2)

    def send(blob: bytes) -> httpx.Response:
        together.wait()
        return server.upload(token, blob)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(send, blobs))
    assert [a.status_code for a in answers] == [201, 201], [a.text for a in answers]
    assert sorted(a.json()["version"] for a in answers) == [1, 2]
    listed = server.get(token, "/api/submissions").json()["submissions"]
    assert [s["version"] for s in listed] == [1, 2]
    # each version is the upload it answered, byte for byte; both kept, in the order received
    for a in answers:
        mine = next(s for s in listed if s["version"] == a.json()["version"])
        assert mine["upload_sha256"] == a.json()["upload_sha256"]
    assert {s["upload_sha256"] for s in listed} == {hashlib.sha256(b).hexdigest() for b in blobs}
    assert listed[0]["received"] <= listed[1]["received"]


def test_a_server_error_is_one_log_line_and_a_plain_page(server: Server) -> None:
    token = server.team("lima")
    blob = targz({**GOOD, "src/note.txt": (b"lima\n", 0o644)})
    # the upload's place in the store taken by a directory: storing it fails (a disk's failure)
    blocker = server.tmp / "contest" / "uploads" / hashlib.sha256(blob).hexdigest()
    blocker.mkdir()
    try:
        answer = server.upload(token, blob)
    finally:
        blocker.rmdir()
    assert answer.status_code == 500 and answer.headers["content-type"].startswith("text/plain")
    assert answer.text == "internal error: the organiser's log has the details\n"
    log = (server.tmp / "contest" / "checks" / "logs" / "serve.log").read_text()
    said = [line for line in log.splitlines() if "POST /api/submissions" in line]
    assert len(said) == 1 and "IsADirectoryError" in said[0] and "Traceback" not in log, said
    assert server.get(token, "/api/submissions").json()["submissions"] == []
    assert not any((server.tmp / "contest" / "incoming").iterdir())
    assert server.upload(token, blob).status_code == 201  # nothing else was harmed


def test_an_intake_process_lost_mid_unpack_is_replaced_and_the_upload_unpacked(server: Server) -> None:
    token = server.team("november")
    pool = _pool_processes(server.proc.pid)
    assert pool, "the intake pool's processes"
    for process in pool:
        process.suspend()
    answer = server.upload(token, targz(GOOD))
    assert answer.status_code == 201 and answer.json()["state"] == "checking", answer.text
    for process in pool:  # as the kernel's OOM killer would, mid-unpack
        process.kill()
    got = server.settled(token, 1)
    # taken up again by a new pool: the server's failure, never charged to the team
    assert got["state"] == "ready" and got["entry_digest"], got
    assert all(not _alive(process) for process in pool)
    assert _pool_processes(server.proc.pid), "a new pool"
    log = (server.tmp / "contest" / "checks" / "logs" / "serve.log").read_text()
    assert "a pool process was lost" in log


def test_killed_mid_check_it_resumes_the_check_and_refuses_uploads_after_the_deadline(server: Server) -> None:
    token = server.team("india")
    answer = server.upload(token, targz(GOOD))
    assert answer.status_code == 201 and answer.json()["state"] == "checking"
    wait_for(lambda: server.get(token, "/api/submissions/1").json()["entry_digest"], 60, "v1 unpacked")
    # the intake pool held still: a second upload is answered at "received" and waits to be unpacked
    pool = _pool_processes(server.proc.pid)
    assert pool, "the intake pool's processes"
    for process in pool:
        process.suspend()
    waiting = server.upload(token, targz({**GOOD, "src/note.txt": (b"v2\n", 0o644)}))
    assert waiting.status_code == 201 and waiting.json()["version"] == 2, waiting.text
    time.sleep(1.0)
    v2 = server.get(token, "/api/submissions/2").json()
    assert v2["state"] == "checking" and v2["entry_digest"] is None, v2
    waits = [(s["step"], s["status"]) for s in v2["steps"]]
    assert waits == [("received", "ok"), ("unpacked", "running")], waits
    # a second upload, half sent when the server is killed: it must leave no version
    half_sent, release = threading.Event(), threading.Event()
    blob = targz({**GOOD, "src/blob": (os.urandom(150_000), 0o644)})
    boundary = "tourney-half-upload"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.tgz"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()

    def body() -> Iterator[bytes]:
        yield head + blob[: len(blob) // 2]
        half_sent.set()
        release.wait(60)
        yield blob[len(blob) // 2 :] + f"\r\n--{boundary}--\r\n".encode()

    def send() -> None:
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(
                f"{server.url}/api/submissions",
                headers={
                    "Authorization": f"Bearer {token}",
                    "Content-Type": f"multipart/form-data; boundary={boundary}",
                },
                content=body(),
                timeout=60,
            )

    sender = threading.Thread(target=send)
    sender.start()
    assert half_sent.wait(30)
    time.sleep(0.5)  # the half on the server's side of the socket
    server.proc.send_signal(signal.SIGKILL)  # mid-upload, and mid-check (or just before it is read)
    server.proc.wait(30)
    # its intake pool died with it (PDEATHSIG), stopped as it was
    try:
        wait_for(lambda: not any(_alive(process) for process in pool), 30, "the intake pool gone")
    finally:
        for process in pool:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()  # psutil checks it is still the process it was (not a reused pid)
    release.set()
    sender.join(60)
    # started again, after the deadline: the pending check is sent again and read; uploads are refused
    past = contest_config(server.tmp, "2020-01-01T00:00:00+00:00", "past.yaml")
    port = free_port()
    proc = start_server(server.tmp, past, port, server.tmp / "serve-2.log")
    server.proc, server.url = proc, f"http://127.0.0.1:{port}"
    got = server.settled(token, 1)
    assert got["state"] == "ready", got
    # the upload answered but never unpacked is unpacked now, and checked
    got = server.settled(token, 2)
    assert got["state"] == "ready", got
    assert [s["step"] for s in got["steps"]] == ["received", "unpacked", "layout", "built", "smoke", "ready"]
    late = server.upload(token, targz(GOOD))
    assert late.status_code == 403 and "2020-01-01T00:00:00+00:00" in late.json()["error"]
    assert [s["version"] for s in server.get(token, "/api/submissions").json()["submissions"]] == [1, 2]
    assert not any((server.tmp / "contest" / "incoming").iterdir())  # the half upload's debris is gone
    # and one server per contest: a second one on the same directory is refused
    second = tourney("serve", past, "--port", str(free_port()), cwd=server.tmp, timeout=60)
    assert second.returncode == 2 and "is served by another tourney serve" in second.stderr, second.stderr
