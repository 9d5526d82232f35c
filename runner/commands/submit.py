"""``tourney submit URL FILE|DIR --token-file F [--no-wait]``: upload a version, print its checks.

A directory is packed first (a .tar.gz of its regular files and directories, refused like an
entry directory if it holds a link, fifo or device: ``runner.domain.packing``); a file is sent
as it is (.tar.gz, .tgz, .tar, .zip, or a POTM contest's one source file). Then, unless
``--no-wait``, each check step is printed as the server reports it, until the version is
ready or failed (docs/submissions.md, "For contestants"). Exit 0 when ready, 1 when not.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from runner.domain.packing import pack_entry
from runner.domain.private_files import read_private_text
from runner.errors import CommandError, UsageError

#: how long ``submit`` waits for the checks before it says where to look instead
WAIT_S = 600.0


def _print_steps(data: dict[str, Any], shown: set[tuple[str, str]]) -> None:
    for step in data.get("steps", []):
        key = (step["step"], step["status"])
        if key in shown:
            continue
        shown.add(key)
        print(f"  {step['step']:9} {step['status']:8} {step['detail']}", flush=True)


def cmd_submit(args: argparse.Namespace) -> int:
    # local: the HTTP client loads only for this command
    import httpx

    token = read_private_text(Path(args.token_file), "--token-file", UsageError).strip()
    path = Path(args.path)
    base = args.url.rstrip("/")
    headers = {"Authorization": f"Bearer {token}"}
    with tempfile.TemporaryDirectory(prefix="tourney-submit-") as tmp:
        if path.is_dir():
            upload = Path(tmp) / f"{path.resolve().name}.tar.gz"
            upload.write_bytes(pack_entry(path))
        elif path.is_file():
            upload = path
        else:
            raise UsageError(f"{path}: no such file or directory")
        try:
            with httpx.Client(timeout=120.0) as client, open(upload, "rb") as f:
                answer = client.post(
                    f"{base}/api/submissions", headers=headers, files={"file": (upload.name, f)}
                )
                data = _json(answer)
                if answer.status_code not in (201, 422):
                    raise CommandError(str(data.get("error") or f"HTTP {answer.status_code}"))
                print(f"{data['team']} version {data['version']}: {base}{data['url']}")
                shown: set[tuple[str, str]] = set()
                _print_steps(data, shown)
                if args.no_wait or data["state"] != "checking":
                    return 0 if data["state"] in ("ready", "checking") else 1
                deadline = time.monotonic() + WAIT_S
                while data["state"] == "checking" and time.monotonic() < deadline:
                    time.sleep(1.0)
                    data = _json(client.get(f"{base}/api/submissions/{data['version']}", headers=headers))
                    _print_steps(data, shown)
        except httpx.HTTPError as e:
            raise CommandError(f"{base}: {e}") from e
    if data["state"] == "checking":
        print(f"still checking after {WAIT_S:.0f}s: see {base}{data['url']}")
        return 1
    if data.get("build_log_url"):
        print(f"  the full build log: {base}{data['build_log_url']}")
    print(f"{data['state']}" + (f": {data['failure']}" if data.get("failure") else ""))
    return 0 if data["state"] == "ready" else 1


def _json(answer: Any) -> dict[str, Any]:
    try:
        data = answer.json()
    except ValueError:
        raise CommandError(f"HTTP {answer.status_code}: {answer.text[:200]}") from None
    if not isinstance(data, dict):
        raise CommandError(f"HTTP {answer.status_code}: an answer that is not a JSON object")
    if "error" in data and answer.status_code >= 400:
        raise CommandError(str(data["error"]))
    return data
