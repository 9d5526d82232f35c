"""Secrets never reach the report (issue 25 item 8).

With ``sandbox: none`` an entry runs with the organiser's rights. This one
walks up its ancestors, prints every ``TOURNEY_*`` variable of their
environments (the local worker's broker URL, with the embedded Redis's
password) and the run key read from the worker's ``--key-file``, in hex and
base64, then plays as ``scan``. A real ``tourney run`` (embedded Redis, a
local Celery worker started as its own program): its stored stderr, ``tourney matches --json`` and
report.html show ``[redacted]`` where the secrets were, and the run says at
start that entries run with the organiser's rights.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

from runner.domain.fleet import Fleet, read_worker_key
from runner.domain.redaction import REDACTED
from runner.report.loader import load_report_data
from runner.storage.store import STORE_FILE
from tests.integration.helpers import SCAN, tourney

THIEF = """\
import base64, json, os, sys
pid, seen = os.getppid(), set()
for _ in range(12):  # bounded: up to the worker, the coordinator, the shell
    try:
        env = open(f"/proc/{pid}/environ", "rb").read().split(b"\\0")
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        break
    for var in env:
        if var.startswith(b"TOURNEY_") and var not in seen:
            seen.add(var)
            print(var.decode(errors="replace"), file=sys.stderr)
    if b"--key-file" in argv:
        text = open(argv[argv.index(b"--key-file") + 1]).read()
        key = json.loads(text)["worker_key"]
        print("worker key", key, file=sys.stderr)
        print("worker key b64", base64.b64encode(bytes.fromhex(key)).decode(), file=sys.stderr)
        print("key file", " ".join(text.split()), file=sys.stderr)
    pid = int(stat.rsplit(")", 1)[1].split()[1])
    if pid <= 1:
        break
os.execv("./scan", ["./scan", *sys.argv[1:]])
"""


def _config(tmp_path: Path) -> Path:
    thief = tmp_path / "thief"
    shutil.copytree(SCAN, thief)
    (thief / "thief.py").write_text(THIEF)
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


def test_an_unsandboxed_entry_cannot_put_the_broker_password_or_worker_key_in_the_report(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    # the worker started as its own program (no standby hand-off): the broker URL is in its
    # environment and its --key-file on its command line, where the entry looks for them
    no_standby = {"TOURNEY_NO_STANDBY": "1"}
    done = tourney(
        "run", config, "--workers", "1", "--no-progress", cwd=tmp_path, timeout=240, extra_env=no_standby
    )
    assert done.returncode == 0, done.stdout + done.stderr
    warning = "warning: sandbox: none: entries run with the organiser's rights"
    assert sum(warning in line for line in done.stderr.splitlines()) == 1, done.stderr

    run_dir = tmp_path / "runs" / "secrets"
    conf = (run_dir / "redis" / "redis.conf").read_text()
    password = next(line.split()[1] for line in conf.splitlines() if line.startswith("requirepass "))
    key_hex = read_worker_key(Fleet().local_worker_key()).key.hex()
    secrets = [password, key_hex, base64.b64encode(bytes.fromhex(key_hex)).decode()]

    lines = [
        line for m in load_report_data(run_dir).matches for g in m.games for line in g.stderr.get("thief", [])
    ]
    # the entry did read them (else this test proves nothing), and they were redacted
    assert any(line.startswith(f"TOURNEY_BROKER_URL=redis://:{REDACTED}@127.0.0.1:") for line in lines), lines
    for shown in (f"worker key {REDACTED}", f"worker key b64 {REDACTED}"):
        assert any(line.startswith(shown) for line in lines), lines  # 'line (xN)' when repeated
    matches = tourney("matches", run_dir, "--json", cwd=tmp_path)
    report = (run_dir / "report.html").read_text()
    for secret in secrets:
        assert all(secret not in line for line in lines)
        assert secret not in matches.stdout and secret not in report
        assert secret.encode() not in (run_dir / STORE_FILE).read_bytes()
