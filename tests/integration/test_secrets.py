"""Secrets with ``sandbox: none`` (issue 25 item 8, issue 34 item 6).

Redaction cannot win against encodings, so with ``sandbox: none`` an entry must
not be able to read the organiser's key, the worker key or the broker password
at all. This entry tries every way in: the environment, the key files and the
embedded Redis's configuration at their paths (an entry may know the layout),
every ``/proc/<pid>/environ`` and ``cmdline`` of the machine (its ancestors: the
local worker, the coordinator) and a ``--key-file`` named there; whatever it
reads it prints raw, in hex, base64, base32 and reversed, then plays as ``scan``.
A real ``tourney run`` (embedded Redis, a local Celery worker started as its
own program), run as root: entries run as the sandbox user, every attempt is
refused, and no form of any secret is in report.html, ``tourney matches
--json`` or tournament.sqlite, because the entry never saw them.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from runner.domain.fleet import ORGANISER_KEY_NAME, Fleet, organiser_home, read_worker_key
from runner.report.loader import load_report_data
from runner.storage.store import STORE_FILE
from tests.integration.helpers import SCAN, tourney

THIEF = """\
import base64, os, sys
TARGETS = TARGETS_HERE

def show(what, data):
    for form, text in (
        ("raw", data.decode("latin-1")),
        ("hex", data.hex()),
        ("b64", base64.b64encode(data).decode()),
        ("b32", base64.b32encode(data).decode()),
        ("rev", data[::-1].decode("latin-1")),
    ):
        print("GOT", what, form, " ".join(text.split()), file=sys.stderr)

def attempt(what, path):
    try:
        with open(path, "rb") as f:
            show(what, f.read())
    except OSError as e:
        print("DENIED", what, e.__class__.__name__, file=sys.stderr)

for name, value in os.environ.items():
    if name.startswith("TOURNEY_") or "redis" in value:
        show("env " + name, value.encode())
for what, path in TARGETS.items():
    attempt(what, path)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())[:2000]  # bounded
ancestors, pid = [], os.getppid()
for _ in range(12):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        break
    ancestors.append(pid)
    pid = int(stat.rsplit(")", 1)[1].split()[1])
    if pid <= 1:
        break
for pid in ancestors:
    attempt(f"ancestor environ", f"/proc/{pid}/environ")
    attempt(f"ancestor memory maps", f"/proc/{pid}/maps")
for pid in pids:
    try:
        env = open(f"/proc/{pid}/environ", "rb").read()
        for var in env.split(b"\\0"):
            if var.startswith(b"TOURNEY_") or b"redis://" in var:
                show(f"environ of {pid}", var)
    except OSError:
        pass
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
    except OSError:
        continue
    for flag in (b"--key-file", b"--broker-file"):
        if flag in argv and argv.index(flag) + 1 < len(argv):
            attempt(f"{flag.decode()} of {pid}", argv[argv.index(flag) + 1].decode())
os.execv("./scan", ["./scan", *sys.argv[1:]])
"""


def _targets(tmp_path: Path) -> dict[str, str]:
    home = organiser_home()
    run_dir = tmp_path / "runs" / "secrets"
    return {
        "organiser key": str(home / ORGANISER_KEY_NAME),
        "worker key": str(Fleet().local_worker_key()),
        "redis.conf": str(run_dir / "redis" / "redis.conf"),
        "sqlite": str(run_dir / STORE_FILE),
    }


def _config(tmp_path: Path) -> Path:
    thief = tmp_path / "thief"
    shutil.copytree(SCAN, thief)
    (thief / "thief.py").write_text(THIEF.replace("TARGETS_HERE", repr(_targets(tmp_path))))
    (thief / "entry.yaml").write_text(
        "name: thief\ngame: mnk\nprotocol: mnk\nbuild: cc -O2 -o scan main.c\nrun: [python3, thief.py]\n"
    )
    config = {
        "name": "secrets",
        "seed": 3,
        "game": "mnk",
        "sandbox": "none",
        "limits": {"move_wall_s": 5.0},
        "boards": {"b": {"text": "3 3 3"}},
        "entries": [{"path": str(thief)}, {"path": str(SCAN)}],
        "stages": [{"name": "rr", "planner": "round_robin", "boards": ["b"], "games_per_pairing": 2}],
    }
    path = tmp_path / "secrets.yaml"
    path.write_text(json.dumps(config))
    return path


def _forms(secret: bytes) -> list[str]:
    """A secret as an entry that read it could print it."""
    forms = [secret.hex(), secret.hex().upper(), base64.b64encode(secret).decode()]
    forms += [base64.b32encode(secret).decode().rstrip("="), base64.b64encode(secret[::-1]).decode()]
    text = secret.decode("latin-1")
    if text.isprintable():
        forms += [text, text[::-1]]
    return forms


@pytest.mark.skipif(os.geteuid() != 0, reason="entries run as another user only when the worker is root")
def test_an_unsandboxed_entry_cannot_read_the_organisers_secrets(tmp_path: Path) -> None:
    config = _config(tmp_path)
    # the worker started as its own program (no standby hand-off): the broker URL is in its
    # environment and its --key-file on its command line, where the entry looks for them
    no_standby = {"TOURNEY_NO_STANDBY": "1"}
    done = tourney(
        "run", config, "--workers", "1", "--no-progress", cwd=tmp_path, timeout=240, extra_env=no_standby
    )
    assert done.returncode == 0, done.stdout + done.stderr
    warning = "warning: sandbox: none: entries run as user nobody (uid 65534)"
    assert sum(warning in line for line in done.stderr.splitlines()) == 1, done.stderr

    run_dir = tmp_path / "runs" / "secrets"
    conf = (run_dir / "redis" / "redis.conf").read_text()
    password = next(line.split()[1] for line in conf.splitlines() if line.startswith("requirepass "))
    worker_key = read_worker_key(Fleet().local_worker_key()).key.hex()
    organiser = (organiser_home() / ORGANISER_KEY_NAME).read_text().strip()
    secrets = {
        "broker password": password.encode(),
        "worker key": bytes.fromhex(worker_key),
        "worker key (hex text)": worker_key.encode(),
        "organiser key": bytes.fromhex(organiser),
        "organiser key (hex text)": organiser.encode(),
    }

    lines = [
        line for m in load_report_data(run_dir).matches for g in m.games for line in g.stderr.get("thief", [])
    ]
    # the entry tried every way in (else this test proves nothing), and every one was refused
    for target in ("organiser key", "worker key", "redis.conf", "sqlite", "ancestor environ"):
        assert any(line.startswith(f"DENIED {target} PermissionError") for line in lines), (target, lines)
    assert [line for line in lines if line.startswith("GOT")] == []
    matches = tourney("matches", run_dir, "--json", cwd=tmp_path)
    report = (run_dir / "report.html").read_text()
    store = (run_dir / STORE_FILE).read_bytes().decode("latin-1")
    for name, secret in secrets.items():
        for form in _forms(secret):
            assert form not in report, name
            assert form not in matches.stdout, name
            assert form not in store, name
