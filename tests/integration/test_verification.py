"""Verification replays (``timing.verify_sample``; docs/fleet.md, "Verification"): real Redis,
real ``tourney run`` coordinators, real ``tourney worker`` processes.

Two honest workers replaying every match flag nothing; a worker that returns *legal* but
false transcripts (the referee replay cannot catch it: a thread of this test holding a real
enrolled key, playing each game with the first legal move instead of running the entries)
is flagged, together with the honest worker whose transcript differed from it.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import redis

from runner.domain.fleet import read_worker_key
from runner.domain.games import get_game
from runner.domain.match_values import MatchSpec
from runner.domain.signing import SigningKey, signed
from runner.domain.wire import from_builtins
from runner.orchestration.redis_server import EmbeddedRedis
from runner.storage.store import RunStore
from runner.storage.verifications import Verifications
from tests.integration.helpers import (
    EnrolledImpostor,
    Organiser,
    assert_nothing_left,
    assert_one_official_result_per_match,
    kill_all,
    standings,
    start_tourney,
    tourney,
    unique,
    wait_for,
    write_config,
)
from tests.integration.test_trust import start_worker, stop
from workers.celery_app import KEYS, queue_for


def _config(directory: Path, name: str, tag: str) -> Path:
    config = write_config(directory, name, entrants=4, sleep=0.02, tag=tag)
    doc = json.loads(config.read_text())
    doc["timing"] = {"verify_sample": 1.0}  # every match replayed on a second worker
    config.write_text(json.dumps(doc))
    return config


def _log(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def _up(url: str, organiser: Organiser, *names: str) -> None:
    r = redis.Redis.from_url(url)
    keys = [KEYS.worker(organiser.key.key_id, n) for n in names]
    try:
        wait_for(lambda: r.exists(*keys) == len(keys), 60, f"workers {names} to come up")
    finally:
        r.close()


def test_two_honest_workers_replaying_every_match_flag_nothing(tmp_path: Path) -> None:
    tag = unique("verok")
    organiser = Organiser(tmp_path / "home")
    config = _config(tmp_path, "verok", tag)
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    run_dir = tmp_path / "runs" / "verok"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    names = [f"h1-{tag}", f"h2-{tag}"]
    workers = [
        start_worker(url, n, tmp_path / n, organiser.enrol(n), "--allow-unsandboxed", "--skip-health-check")
        for n in names
    ]
    try:
        _up(url, organiser, *names)
        proc = start_tourney("run", config, "--broker", url, "--no-local-workers", "--no-progress",
                             cwd=tmp_path, log=log, extra_env=organiser.env())  # fmt: skip
        assert proc.wait(180) == 0, _log(log)[-3000:]
    finally:
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(run_dir)])
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        agrees = {e.match_id: e.detail for e in store.events("verify_agrees")}
        mismatches = [e.detail for e in store.events("verify_mismatch")]
        workers_meta = store.meta().get("workers") or {}
    assert mismatches == []
    assert set(agrees) == {row.match_id for row in rows}, (agrees, [r.match_id for r in rows])
    for row in rows:  # replayed by the other worker, never by the one whose result counts
        played_by = row.worker.split("/")[0]
        assert f"played by {played_by}, replayed by " in agrees[row.match_id]
        assert f"replayed by {played_by}:" not in agrees[row.match_id], agrees[row.match_id]
    assert not any(rec.get("suspect") for rec in workers_meta.values()), workers_meta
    listed = tourney("matches", run_dir, cwd=tmp_path)
    assert listed.returncode == 0 and listed.stdout.count("verify: agrees on ") == len(rows), listed.stdout
    as_json = json.loads(tourney("matches", run_dir, "--json", cwd=tmp_path).stdout)
    assert {m["verification"]["state"] for m in as_json} == {"agrees"} and len(as_json) == len(rows)
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "ref")  # the replays changed nothing
    assert_nothing_left([tag, str(run_dir)])


class Tamperer(EnrolledImpostor):
    """An enrolled key holder that answers every task at once with a transcript the rules
    accept but that the entries never played: each seat plays the first legal move. It hands
    back a replay of a match it played itself (as an honest worker does)."""

    lifetime_s = 150.0

    def __init__(self, url: str, queue: str, key: SigningKey, organiser: SigningKey, name: str) -> None:
        super().__init__(url, queue, key, organiser, name)
        self.replays = 0

    def take(self, task: dict[str, Any], message: bytes | str) -> None:
        if task.get("verify_of") == self.name:
            time.sleep(0.5)  # another worker's to take
            self.r.lpush(self.queue, message)
            return
        self.answer(task)

    def answer(self, task: dict[str, Any]) -> None:
        spec = from_builtins(task["spec"], MatchSpec)
        rules = get_game(spec.game, **spec.game_params)
        games = []
        for order in spec.orders:
            state = rules.new_game(spec.board_text, len(order))
            moves = []
            while (outcome := rules.outcome(state)) is None:
                move = rules.legal_moves(state)[0]
                moves.append(
                    {"player": order[rules.to_move(state)], "move": rules.format_move(move), "wall_ms": 1.0}
                )
                state = rules.play(state, move)
            winner = order[outcome.winners[0]] if len(outcome.winners) == 1 else None
            games.append(
                {"order": list(order), "winner": winner,
                 "scores": {name: outcome.scores[seat] for seat, name in enumerate(order)},
                 "verdict": {"kind": "normal", "player": None, "detail": ""}, "moves": moves,
                 "reason": outcome.reason}
            )  # fmt: skip
        digests = {name: ref.digest for name, ref in spec.entries.items()}
        replay = bool(task.get("verify_of"))
        common = {"match_id": spec.match_id, "attempt": task["attempt"], "worker": self.name}
        started = {"kind": "started", **common, **({"verify": True} if replay else {})}
        result = {"match_id": spec.match_id, "games": games, "worker": self.name, "digests": digests}
        finished = {"kind": "result", "run": task["run"], **common, "result": result,
                    **({"verify": True} if replay else {})}  # fmt: skip
        self.r.rpush(KEYS.inbox(task["run"]), signed(started, self.key), signed(finished, self.key))
        self.answered += 1
        self.replays += replay


def test_a_worker_returning_false_transcripts_is_flagged_with_the_honest_one(tmp_path: Path) -> None:
    tag = unique("vertamper")
    organiser = Organiser(tmp_path / "home")
    config = _config(tmp_path, "vertamper", tag)
    run_dir = tmp_path / "runs" / "vertamper"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    liar_name, honest_name = f"tamper-{tag}", f"honest-{tag}"
    tamperer = Tamperer(
        url, queue_for(organiser.key.key_id), read_worker_key(organiser.enrol(liar_name)).key,
        organiser.key, liar_name,
    )  # fmt: skip
    honest = start_worker(
        url, honest_name, tmp_path / "honest", organiser.enrol(honest_name), "--allow-unsandboxed",
        "--skip-health-check",
    )  # fmt: skip
    try:
        _up(url, organiser, honest_name)
        tamperer.start()
        proc = start_tourney("run", config, "--broker", url, "--no-local-workers", "--no-progress",
                             cwd=tmp_path, log=log, extra_env=organiser.env())  # fmt: skip
        assert proc.wait(180) == 0, _log(log)[-3000:]
    finally:
        tamperer.stop.set()
        tamperer.join(10)
        stop(honest)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert tamperer.answered > 0
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        mismatches = [(e.match_id, e.detail) for e in store.events("verify_mismatch")]
        workers_meta = store.meta().get("workers") or {}
    assert mismatches, _log(log)[-3000:]
    for _, detail in mismatches:  # one event names both workers
        assert liar_name in detail and honest_name in detail and "transcripts differ" in detail, detail
    for name in (liar_name, honest_name):
        assert "differs from" in workers_meta[name].get("suspect", ""), workers_meta
        assert not workers_meta[name]["quarantined"]  # flagged, not quarantined: who lied is unproven
    # every match has exactly one official result, from whichever worker played it
    assert_one_official_result_per_match(run_dir)
    assert {row.state for row in rows} == {"done"}
    shown = tourney("standings", run_dir, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"Worker {liar_name} SUSPECT" in shown.stdout and f"Worker {honest_name} SUSPECT" in shown.stdout
    listed = tourney("matches", run_dir, cwd=tmp_path)
    assert "verify: DIFFERS (" in listed.stdout, listed.stdout
    report = (run_dir / "report.html").read_text()
    assert f"worker {liar_name} SUSPECT" in report and f"worker {honest_name} SUSPECT" in report
    fleet = tourney("fleet", "list", cwd=tmp_path, extra_env=organiser.env())
    suspects = [line for line in fleet.stdout.splitlines() if "SUSPECT: transcript of match" in line]
    assert {line.split()[0] for line in suspects} == {liar_name, honest_name}, fleet.stdout
    assert_nothing_left([tag, str(run_dir)])


def _verifications(run_dir: Path) -> list[tuple[str, str]]:
    try:
        with RunStore.open(run_dir) as store:
            return [(v.match_id, v.state) for v in Verifications(store).all()]
    except Exception:
        return []


def test_replays_left_open_are_sent_again_on_resume_and_given_up_without_a_second_worker(
    tmp_path: Path,
) -> None:
    """With one worker nobody else can replay its matches: the run waits for the replays, then
    gives them up and ends. A coordinator killed while replays are open sends them again when
    resumed, and a second worker started meanwhile plays them."""
    tag = unique("verresume")
    organiser = Organiser(tmp_path / "home")
    config = _config(tmp_path, "verresume", tag)
    run_dir = tmp_path / "runs" / "verresume"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    first, second = f"first-{tag}", f"second-{tag}"
    flags = ("--allow-unsandboxed", "--skip-health-check")
    workers = [start_worker(url, first, tmp_path / first, organiser.enrol(first), *flags)]
    args = ("run", config, "--broker", url, "--no-local-workers", "--no-progress")
    try:
        _up(url, organiser, first)
        # a run of its own, on the one worker: every replay given up, and only then the end
        lone = _config(tmp_path / "lone", "lone", f"{tag}-lone")
        t0 = time.monotonic()
        alone = tourney("run", lone, "--broker", url, "--no-local-workers", "--no-progress",
                        cwd=tmp_path / "lone", extra_env=organiser.env())  # fmt: skip
        took = time.monotonic() - t0
        assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr
        given_up = _verifications(tmp_path / "lone" / "runs" / "lone")
        # the run: killed once every match is played and its replay sent, none of them done
        proc = start_tourney(*args, cwd=tmp_path, log=log, extra_env=organiser.env())
        wait_for(lambda: len(_verifications(run_dir)) == 6, 120, "every replay to be sent")
        proc.kill()
        proc.wait(10)
        left_open = _verifications(run_dir)
        workers.append(start_worker(url, second, tmp_path / second, organiser.enrol(second), *flags))
        _up(url, organiser, second)
        resumed = tourney(*args, cwd=tmp_path, extra_env=organiser.env())
    finally:
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert {state for _, state in given_up} == {"given_up"} and len(given_up) == 6, given_up
    assert took > 10.0, took  # 20 heartbeats of 0.5 s after its last match, not at once
    assert {state for _, state in left_open} <= {"sent", "running"}, left_open
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr
    with RunStore.open(run_dir) as store:
        done = {v.match_id: (v.state, v.verifier) for v in Verifications(store).all()}
        sent = store.events("verify_sent")
    assert {m for m, _ in left_open} == set(done), done
    assert all(state == "agrees" and verifier.startswith(second) for state, verifier in done.values()), done
    assert len(sent) == 6  # sent again, not recorded again
    assert_nothing_left([tag, str(run_dir)])


URANDOM = Path(__file__).resolve().parent / "entries" / "urandom"


def test_an_entry_falsely_declaring_itself_deterministic_gets_no_honest_worker_flagged(
    tmp_path: Path,
) -> None:
    """Issue 34 item 7: ``liar`` says ``deterministic: true`` and draws its moves from
    /dev/urandom, so the replays of its matches differ whoever plays them. Every difference
    follows the entry, none follows a worker across entries: the two honest workers are not
    flagged (the replays of the other entries' matches agree)."""
    tag = unique("verliar")
    organiser = Organiser(tmp_path / "home")
    liar = tmp_path / "liar"
    shutil.copytree(URANDOM, liar)
    text = (liar / "entry.yaml").read_text().replace("name: urandom", "name: liar")
    (liar / "entry.yaml").write_text(text + "deterministic: true\n")
    config = _config(tmp_path, "verliar", tag)
    doc = json.loads(config.read_text())
    doc["entries"][0]["variants"]["count"] = 3
    doc["entries"].insert(0, {"path": str(liar)})
    config.write_text(json.dumps(doc))
    run_dir = tmp_path / "runs" / "verliar"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    names = [f"h1-{tag}", f"h2-{tag}"]
    workers = [
        start_worker(url, n, tmp_path / n, organiser.enrol(n), "--allow-unsandboxed", "--skip-health-check")
        for n in names
    ]
    try:
        _up(url, organiser, *names)
        proc = start_tourney("run", config, "--broker", url, "--no-local-workers", "--no-progress",
                             cwd=tmp_path, log=log, extra_env=organiser.env())  # fmt: skip
        assert proc.wait(180) == 0, _log(log)[-3000:]
    finally:
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(run_dir)])
    with RunStore.open(run_dir) as store:
        rows = {r.match_id: r for r in store.match_rows()}
        mismatches = [str(e.match_id) for e in store.events("verify_mismatch")]
        agrees = [str(e.match_id) for e in store.events("verify_agrees")]
        workers_meta = store.meta().get("workers") or {}
    assert mismatches, _log(log)[-3000:]  # the liar's matches differ ...
    assert all(any("liar" in o for o in rows[m].plan.orders) for m in mismatches)
    assert any(not any("liar" in o for o in rows[m].plan.orders) for m in agrees)  # ... no other's
    assert not any(rec.get("suspect") for rec in workers_meta.values()), workers_meta
    shown = tourney("standings", run_dir, cwd=tmp_path)
    assert shown.returncode == 0 and "Worker" not in shown.stdout.split("SUSPECT")[0][-40:], shown.stdout
    assert "SUSPECT" not in shown.stdout or "Entry liar SUSPECT" in shown.stdout, shown.stdout
    fleet = tourney("fleet", "list", cwd=tmp_path, extra_env=organiser.env())
    assert "SUSPECT" not in fleet.stdout, fleet.stdout
    assert_nothing_left([tag, str(run_dir)])
