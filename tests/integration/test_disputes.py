"""Disputed matches end to end (issue 12): `tourney rerun` keeps numbered candidates,
`tourney accept` makes exactly one of them official, the elimination is replanned, and
`tourney run` (real Celery workers over a real embedded Redis) finishes the run, which the
bracket audit (tests/stages/audit.py) then checks from the JSON a user sees."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from runner.storage.disputes import Disputes
from runner.storage.resolved import read_resolved
from runner.storage.store import RunStore
from tests.integration.helpers import SCAN, tourney, write_config
from tests.stages.audit import check_elimination

URANDOM = Path(__file__).resolve().parent / "entries" / "urandom"
K = 2  # eight entrants: the winners bracket stops at 4, both together at 6 or fewer: a second round


def elimination_config(directory: Path, name: str, entry: Path, control: Path) -> Path:
    """Eight seeded `scan` players in a POTM elimination (K=2) on small m,n,k boards, one per round."""
    boards = {f"b{i}": {"text": text} for i, text in enumerate(["4 4 3", "4 5 3", "5 4 3", "5 5 3"], 1)}
    config = {
        "name": name,
        "seed": 11,
        "game": "mnk",
        "sandbox": "none",
        "limits": {"move_wall_s": 5.0},
        "boards": boards,
        "entries": [
            {
                "path": str(entry),
                "variants": {
                    "count": 8,
                    "prefix": "p",
                    "args": ["--seed", "{i}", "--control", str(control), "--tag", name],
                },
            }
        ],
        "stages": [
            {"name": "elim", "planner": "potm_elimination", "boards": list(boards), "k": K, "max_rounds": 4}
        ],
    }
    path = directory / f"{name}.yaml"
    path.write_text(json.dumps(config, indent=2))
    return path


def run_with_workers(config: Path, run_dir: Path, cwd: Path) -> None:
    done = tourney(
        "run", config, "--run-dir", run_dir, "--workers", "1", "--no-progress", cwd=cwd, timeout=240
    )
    assert done.returncode == 0, done.stdout + done.stderr


def matches_json(run_dir: Path, cwd: Path) -> list[dict[str, Any]]:
    out = tourney("matches", run_dir, "--json", cwd=cwd)
    assert out.returncode == 0, out.stderr
    rows: list[dict[str, Any]] = json.loads(out.stdout)
    return rows


def audit(run_dir: Path, cwd: Path) -> list[dict[str, Any]]:
    """The bracket audit from `standings --json` and `matches --json` of the final state."""
    shown = tourney("standings", run_dir, "--json", cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    stage = json.loads(shown.stdout)["stages"][0]
    assert stage["status"] == "done"
    rows = [r for r in matches_json(run_dir, cwd) if r.get("state") != "obsolete"]
    check_elimination(stage, rows, K)
    return rows


def disputed_round_one(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], str, str]:
    """A first-round match, the player who is made to forfeit its rerun (the match winner, or
    the first player of a tied match) and the player who then wins it."""
    m = next(r for r in rows if r["round"] == 1)
    a, b = m["players"]
    was = m["result"]["match_winner"]
    loser = was or a
    return m, loser, b if loser == a else a


def test_a_dispute_that_changes_a_winner_is_accepted_replanned_and_finished(
    tmp_path: Path, entry_files: Path
) -> None:
    control = entry_files / "control"  # read by the entries, which may run as another user
    control.write_text("")
    config = elimination_config(tmp_path, "dispute", SCAN, control)
    run_dir = tmp_path / "run"
    run_with_workers(config, run_dir, tmp_path)
    before = audit(run_dir, tmp_path)
    m, loser, winner = disputed_round_one(before)
    mid = m["match_id"]
    old_ids = {r["match_id"] for r in before}

    # the disputed rerun: the player that won forfeits (no code change: a control file)
    control.write_text(f"forfeit {loser.split('-')[1]}\n")
    rerun = tourney("rerun", run_dir, mid, "--by", "referee", cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert "kept as candidate 1" in rerun.stdout and "nothing became official" in rerun.stdout
    assert "first difference: game 1, move" in rerun.stdout
    assert f"the first different move is {loser}'s" in rerun.stdout
    assert "not deterministic" in rerun.stdout
    control.write_text("")
    with RunStore.open(run_dir) as store:
        row = store.match_record(mid)
        (cand,) = Disputes(store).candidates(mid)
    assert row is not None and row.result is not None and row.result != cand.result  # nothing official
    assert cand.played_by == "referee" and cand.changed_code == {}

    # `rerun --accept` is gone: what is accepted must be what was reviewed
    gone = tourney("rerun", run_dir, mid, "--accept", cwd=tmp_path)
    assert gone.returncode == 2 and "tourney accept" in gone.stderr

    accepted = tourney(
        "accept", run_dir, mid, "1", "--reason", "forfeit upheld", "--by", "alice", cwd=tmp_path
    )
    assert accepted.returncode == 0, accepted.stderr
    out = accepted.stdout
    assert "accepted: candidate 1" in out and "by alice: forfeit upheld" in out
    assert "replanned:" in out and "new:" in out and "match(es) to play: tourney run" in out

    with RunStore.open(run_dir) as store:
        row = store.match_record(mid)
        (acc,) = Disputes(store).acceptances()
        pending = store.pending()
    assert row is not None and row.result == cand.result  # exactly the reviewed candidate
    assert row.superseded and len(row.superseded) == 1
    assert acc.by == "alice" and acc.reason == "forfeit upheld" and acc.candidate == 1
    assert acc.planned and set(acc.planned) <= set(pending) | {r for r in acc.planned}
    assert set(acc.voided) <= old_ids

    run_with_workers(config, run_dir, tmp_path)
    after = audit(run_dir, tmp_path)  # the bracket rules hold for the final state
    disputed = next(r for r in after if r["match_id"] == mid)
    assert disputed["result"]["match_winner"] == winner
    assert disputed["official_result"]["how"] == "accepted"
    assert disputed["official_result"]["by"] == "alice"
    assert disputed["official_result"]["replaces_attempt"] == 1
    assert disputed["superseded_results"][0]["how"] == "played"
    assert [e["event"] for e in disputed["history"]] == ["rerun", "accept"]
    assert {r["match_id"] for r in after if r["round"] == 2} & set(acc.planned)

    listed = tourney("disputes", run_dir, "--json", cwd=tmp_path)
    doc = json.loads(listed.stdout)
    assert [c["status"] for c in doc["candidates"]] == ["official"]
    assert doc["acceptances"][0]["reason"] == "forfeit upheld"
    html = (run_dir / "report.html").read_text()
    assert 'id="disputes"' in html and "forfeit upheld" in html and "superseded" in html


def test_changed_code_rerun_accepted_with_adopt_and_the_run_finishes(tmp_path: Path) -> None:
    entry = tmp_path / "scan"
    shutil.copytree(SCAN, entry)
    control = tmp_path / "control"
    control.write_text("")
    config = elimination_config(tmp_path, "fixed", entry, control)
    run_dir = tmp_path / "run"
    run_with_workers(config, run_dir, tmp_path)
    before = audit(run_dir, tmp_path)
    m, loser, winner = disputed_round_one(before)
    mid = m["match_id"]
    old_digest = read_resolved(run_dir).entries[loser].digest  # type: ignore[union-attr]

    # the organiser "fixes" the entry: from now on the player that won forfeits every move
    source = entry / "main.c"
    seed = loser.split("-")[1]
    code = source.read_text()
    fixed = code.replace(
        '    printf("%d %d\\n", cell',
        f'    if (seed == {seed}) {{ printf("0 0\\n"); return 0; }}\n    printf("%d %d\\n", cell',
    )
    assert fixed != code
    source.write_text(fixed)

    refused = tourney("rerun", run_dir, mid, cwd=tmp_path)
    assert refused.returncode == 2 and "--allow-changed-code" in refused.stderr
    rerun = tourney("rerun", run_dir, mid, "--allow-changed-code", cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert "entry code changed" in rerun.stdout and "--adopt-code|--keep-code" in rerun.stdout
    with RunStore.open(run_dir) as store:
        (cand,) = Disputes(store).candidates(mid)
    new_digest = cand.digests[loser]
    assert new_digest != old_digest and cand.changed_code[loser] == (old_digest, new_digest)

    undecided = tourney("accept", run_dir, mid, "1", "--reason", "build fixed", cwd=tmp_path)
    assert undecided.returncode == 2 and "--adopt-code" in undecided.stderr
    accepted = tourney("accept", run_dir, mid, "1", "--reason", "build fixed", "--adopt-code", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    assert "adopted code, later matches play it" in accepted.stdout

    # the run's record moved to the new code for all eight variants (one program), with history
    resolved = read_resolved(run_dir)
    assert resolved is not None and {e.digest for e in resolved.entries.values()} == {new_digest}
    assert list(run_dir.glob("resolved.*.json"))
    with RunStore.open(run_dir) as store:
        assert set(store.meta()["entries"].values()) == {new_digest}
        (acc,) = Disputes(store).acceptances()
        assert acc.code_choice == "adopt" and acc.code_changes[loser] == (old_digest, new_digest)
        for pid in store.pending():
            assert {ref.digest for ref in store.spec(pid).entries.values()} == {new_digest}

    # the resume guard accepts the run with the adopted code in the tree, and it finishes
    run_with_workers(config, run_dir, tmp_path)
    after = audit(run_dir, tmp_path)
    disputed = next(r for r in after if r["match_id"] == mid)
    assert disputed["result"]["match_winner"] == winner
    assert disputed["official_result"]["code_choice"] == "adopt"
    assert disputed["official_result"]["digests"][loser] == new_digest
    later = [r for r in after if r["round"] > 1 and loser in r["players"]]
    for r in later:  # the adopted code forfeits: whoever plays it wins
        assert r["result"]["match_winner"] not in (loser, None)
    assert "adopted" in (run_dir / "report.html").read_text()

    # a match the accept voided and a later replan planned again (same id) was played with the old
    # code: it is not the same match any more, so it was replayed with the adopted code, never kept
    back = [r["match_id"] for r in after if r["match_id"] in acc.voided]
    with RunStore.open(run_dir) as store:
        fates = Disputes(store).voided_fates(list(acc.voided))
        for mid_back in back:
            row = store.match_record(mid_back)
            assert row is not None and row.result is not None and row.superseded
            assert set(row.result.digests.values()) == {new_digest}, mid_back
    assert all(fates[m] == "replayed" for m in back) and all(
        fates[m] == "voided" for m in acc.voided if m not in back
    )
    listed = tourney("disputes", run_dir, cwd=tmp_path)
    assert listed.returncode == 0 and "kept (" not in listed.stdout
    if back:
        assert f"replayed (planned again with adopted code) {', '.join(back)}" in listed.stdout


def test_deterministic_rerun_is_identical_and_accept_takes_exactly_the_candidate(tmp_path: Path) -> None:
    config = {
        "name": "coin",
        "seed": 5,
        "game": "mnk",
        "sandbox": "none",
        "limits": {"move_wall_s": 5.0},
        "boards": {"b": {"text": "7 7 5"}},
        "entries": [
            {"path": str(SCAN), "variants": {"count": 2, "prefix": "s", "args": ["--seed", "{i}"]}},
            {"path": str(URANDOM)},
        ],
        "stages": [{"name": "rr", "planner": "round_robin", "boards": ["b"], "games_per_pairing": 2}],
    }
    path = tmp_path / "coin.yaml"
    path.write_text(json.dumps(config))
    run_dir = tmp_path / "run"
    first = tourney("run", path, "--run-dir", run_dir, "--inline", "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    with RunStore.open(run_dir) as store:
        rows = store.match_records()
    seeded = next(r for r in rows if "urandom" not in r.players)
    random_match = next(r for r in rows if "urandom" in r.players)

    # a fresh interpreter (its own hash seed), not a fork of the one that played the run
    same = tourney("rerun", run_dir, seeded.match_id, cwd=tmp_path, fork=False)
    assert same.returncode == 0, same.stderr
    assert "identical move for move" in same.stdout

    # two reruns of a match with the random entry differ (49 cells, random moves)
    for _ in range(2):
        done = tourney("rerun", run_dir, random_match.match_id, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "urandom is not deterministic" in done.stdout or "urandom's" in done.stdout
    with RunStore.open(run_dir) as store:
        one, two = Disputes(store).candidates(random_match.match_id)
    assert one.result != two.result and one.result != random_match.result

    accepted = tourney("accept", run_dir, random_match.match_id, "1", "--reason", "review 1", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    with RunStore.open(run_dir) as store:
        row = store.match_record(random_match.match_id)
        assert row is not None and row.result == one.result  # candidate 1 as stored, no new play
        assert row.candidates == (two.result,)
        assert row.superseded == (random_match.result,)
    again = tourney("accept", run_dir, random_match.match_id, "1", "--reason", "twice", cwd=tmp_path)
    assert again.returncode == 2 and "already the official result" in again.stderr
    missing = tourney("accept", run_dir, random_match.match_id, "9", "--reason", "none", cwd=tmp_path)
    assert missing.returncode == 2 and "no candidate 9" in missing.stderr
    listed = tourney("disputes", run_dir, cwd=tmp_path)
    assert listed.returncode == 0 and "review 1" in listed.stdout


def test_changed_code_accepted_with_keep_leaves_later_matches_on_the_recorded_code(tmp_path: Path) -> None:
    entry = tmp_path / "scan"
    shutil.copytree(SCAN, entry)
    config = write_config(tmp_path, "kept", entrants=3, final_top=2, entry=entry)
    run_dir = tmp_path / "runs" / "kept"
    first = tourney("run", config, "--inline", "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    with RunStore.open(run_dir) as store:
        rr = next(r for r in store.match_records() if r.stage == "rr")
    recorded = read_resolved(run_dir).entries[rr.players[0]].digest  # type: ignore[union-attr]
    source = entry / "main.c"
    original = source.read_text()
    source.write_text(original + "\n/* rebuilt after the dispute */\n")

    rerun = tourney("rerun", run_dir, rr.match_id, "--allow-changed-code", cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    accepted = tourney(
        "accept", run_dir, rr.match_id, "1", "--reason", "one-off", "--keep-code", cwd=tmp_path
    )
    assert accepted.returncode == 0, accepted.stderr
    assert "kept the recorded code for later matches" in accepted.stdout
    assert read_resolved(run_dir).entries[rr.players[0]].digest == recorded  # type: ignore[union-attr]

    # the run keeps its recorded code: with the changed code in the tree it is refused ...
    refused = tourney("run", config, "--inline", "--no-progress", cwd=tmp_path)
    assert refused.returncode == 2 and "changed since this run started" in refused.stderr
    source.write_text(original)  # ... and with the recorded code back it resumes and finishes
    again = tourney("run", config, "--inline", "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    rows = {r["match_id"]: r for r in matches_json(run_dir, tmp_path)}
    origin = rows[rr.match_id]["official_result"]
    assert origin["code_choice"] == "keep" and origin["digests"][rr.players[0]] != recorded
    with RunStore.open(run_dir) as store:
        for r in store.match_records():
            if r.match_id != rr.match_id and r.spec is not None:
                assert {ref.digest for ref in r.spec.entries.values()} == {recorded}
