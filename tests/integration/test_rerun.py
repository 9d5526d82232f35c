"""`tourney rerun`: replay a disputed match exactly, keep both results; `tourney accept` replans."""

from __future__ import annotations

import shutil
from pathlib import Path

from runner.domain.stages.tournament import advance
from runner.storage.run_dir import load_run_config
from runner.storage.store import RunStore
from tests.integration.helpers import SCAN, standings, tourney, write_config


def test_rerun_compare_refuse_changed_code_accept_and_replan(tmp_path: Path, entry_files: Path) -> None:
    entry = tmp_path / "scan"
    shutil.copytree(SCAN, entry)
    control = entry_files / "control"  # read by the entries, which may run as another user
    control.write_text("")
    config = write_config(tmp_path, "dispute", entrants=4, final_top=2, control=control, entry=entry)
    run_dir = tmp_path / "runs" / "dispute"
    first = tourney("run", config, "--inline", "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = standings(run_dir)
    winner = before["stages"]["rr"][0][1]  # the round robin's best: a finalist
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
    rr_matches = [r for r in rows if r.stage == "rr" and winner in r.players]
    old_final = [r.match_id for r in rows if r.stage == "final"]
    assert len(rr_matches) == 3 and len(old_final) == 1

    # an exact replay: same board, seats, seed and code give the same games; both are kept
    mid = rr_matches[0].match_id
    same = tourney("rerun", run_dir, mid[:8], cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert "identical move for move" in same.stdout and "kept as candidate 1" in same.stdout
    with RunStore.open(run_dir) as store:
        row = store.match_row(mid)
    assert row is not None and len(row.candidates) == 1 and row.result == rr_matches[0].result

    # changed code is refused unless allowed
    source = entry / "main.c"
    original = source.read_text()
    source.write_text(original + "\n/* changed */\n")
    refused = tourney("rerun", run_dir, mid, cwd=tmp_path)
    assert refused.returncode == 2
    assert "changed" in refused.stderr and "--allow-changed-code" in refused.stderr
    allowed = tourney("rerun", run_dir, mid, "--allow-changed-code", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert "replaying with changed code" in allowed.stdout
    source.write_text(original)

    # the finalist now forfeits: accepting the reruns changes who reaches the final
    seed = winner.split("-")[1]
    control.write_text(f"forfeit {seed}\n")
    outputs = []
    for r in rr_matches:
        done = tourney("rerun", run_dir, r.match_id, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "first difference: game 1, move" in done.stdout
        number = done.stdout.split("kept as candidate ")[1].split()[0]
        accepted = tourney("accept", run_dir, r.match_id, number, "--reason", "forfeits", cwd=tmp_path)
        assert accepted.returncode == 0, accepted.stderr
        assert "accepted" in accepted.stdout
        outputs.append(accepted.stdout)
    text = "\n".join(outputs)
    assert f"obsolete: {old_final[0]}" in text
    assert "new match(es) to play" in text
    assert f"standings rr: {winner} #1" in text

    with RunStore.open(run_dir) as store:
        for r in rr_matches:
            row = store.match_row(r.match_id)
            assert row is not None and row.result is not None
            assert row.superseded and row.superseded[0] == r.result  # the old result is kept
            assert all(g.winner != winner for g in row.result.games)
        assert store.match_row(old_final[0]).state == "obsolete"  # type: ignore[union-attr]
        pending = store.pending()
    assert len(pending) == 1

    # running the same command again plays the newly planned final
    resumed = tourney("run", config, "--inline", "--no-progress", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    after = standings(run_dir)
    finalists = {row[1] for row in after["stages"]["final"]}
    assert winner not in finalists and len(finalists) == 2
    with RunStore.open(run_dir) as store:
        assert advance(load_run_config(run_dir), store.official_results()).finished


def test_rerun_refuses_unknown_or_unplayed_matches(tmp_path: Path) -> None:
    config = write_config(tmp_path, "few", entrants=2)
    assert tourney("run", config, "--inline", "--no-progress", cwd=tmp_path).returncode == 0
    done = tourney("rerun", tmp_path / "runs" / "few", "zzzz", cwd=tmp_path)
    assert done.returncode == 2 and "no match" in done.stderr
    done = tourney("rerun", tmp_path / "nowhere", "abc", cwd=tmp_path)
    assert done.returncode == 2 and "not a run directory" in done.stderr
