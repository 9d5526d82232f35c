"""The run, live on the submission server (docs/submissions.md, "The run, live"): while
``tourney run`` plays the teams' counting versions, ``/run`` and ``/api/run`` show its
standings, brackets and each finished game as its result is accepted, read from the run's
store; over real HTTP, with a real server, a real worker for the checks and a real run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import start_tourney, wait_for
from tests.integration.submission_server import GOOD, Server, contest_config, serving, targz

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}")

TEAMS = ("ash", "birch", "cedar")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("serve-live")) as served:
        yield served


def _midway(got: dict[str, Any]) -> bool:
    """The run is playing, some of its matches done and some not."""
    return bool(got["state"] == "playing" and 0 < got["matches"]["done"] < got["matches"]["planned"])


def test_the_server_shows_the_run_as_its_results_are_accepted(server: Server) -> None:
    waiting = httpx.get(f"{server.url}/run")
    assert waiting.status_code == 200 and "No run is playing yet" in waiting.text
    assert httpx.get(f"{server.url}/api/run").json()["state"] == "none"
    for team in TEAMS:
        assert server.upload(server.team(team), targz(GOOD)).status_code == 201
    for team in TEAMS:
        assert server.settled(server.tokens[team], 1)["state"] == "ready"

    config = contest_config(server.tmp, "2020-01-01T00:00:00+00:00", "live.yaml", from_submissions=True)
    log = server.tmp / "run.log"
    run = start_tourney("run", config, "--inline", "--no-progress", cwd=server.tmp, log=log)
    seen: list[dict[str, Any]] = []
    page_while_playing = ""
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            got = httpx.get(f"{server.url}/api/run", timeout=30).json()
            seen.append(got)
            if _midway(got) and not page_while_playing:
                page_while_playing = httpx.get(f"{server.url}/run", timeout=30).text
            if got["state"] == "finished" or run.poll() is not None:
                break
            time.sleep(0.2)
        assert run.wait(120) == 0, log.read_text()
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(30)
    wait_for(lambda: httpx.get(f"{server.url}/api/run").json()["state"] == "finished", 30, "the run's end")
    final = httpx.get(f"{server.url}/api/run").json()

    # seen while it played: some matches done, others not, and the games so far with them
    playing = [
        s for s in seen if s["state"] == "playing" and 0 < s["matches"]["done"] < s["matches"]["planned"]
    ]
    assert playing, [s["matches"] for s in seen]
    assert all(len(s["games"]) < len(final["games"]) for s in playing)
    counts = [len(s.get("games", [])) for s in seen]
    assert counts == sorted(counts)  # games only ever appear, in the order they were accepted
    first = playing[0]
    assert {row["entry"] for st in first["stages"][:1] for row in st["standings"]} <= set(TEAMS)
    # the page while it played: the report's standings, and its polling for the next result
    assert page_while_playing, "no page fetched while the run played"
    assert 'class="standings' in page_while_playing and "/api/run/version" in page_while_playing
    assert any(team in page_while_playing for team in TEAMS)

    # at the end: what the run itself wrote
    standings = json.loads((server.tmp / "runs" / "icfp98" / "standings.json").read_text())
    assert final["final_ranking"] == standings["final_ranking"] and set(final["final_ranking"]) == set(TEAMS)
    played = sum(row["games"] for st in standings["stages"] for row in st["standings"]) // 2
    assert len(final["games"]) == played
    assert all(set(g["players"]) <= set(TEAMS) and g["moves"] > 0 for g in final["games"])
    page = httpx.get(f"{server.url}/run").text
    assert "Final ranking" in page and all(team in page for team in TEAMS)
    version = httpx.get(f"{server.url}/api/run/version").json()
    assert version == {"state": "finished", "version": final["version"]}
