"""Over real Redis and a real Celery worker: what entries say reaches the organiser's machine.

The worker plays an mnk round robin of an entry that uses ``{seed}`` and writes
it on stderr, an entry whose build fails, and a plain one. The build log and
the stderr lines come back inside the signed results; the coordinator checks
and stores them; ``tourney build-log`` and ``tourney matches`` read them from
the run directory alone.
"""

from __future__ import annotations

from pathlib import Path

from runner.domain.placeholders import game_seed
from runner.report.loader import load_report_data
from tests.integration.helpers import assert_nothing_left, tourney

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

SEEDED = """\
import random
import sys

seed = int(sys.argv[1])
print(f"seed {seed}", file=sys.stderr)
lines = sys.stdin.read().split("\\n")
w, h, _ = (int(v) for v in lines[0].split())
taken = {tuple(int(v) for v in ln.split()) for ln in lines[1:] if ln.strip()}
free = [(x, y) for y in range(1, h + 1) for x in range(1, w + 1) if (x, y) not in taken]
print(*random.Random(seed * 1000 + len(taken)).choice(free))
"""

CONFIG = """\
name: notes-celery
seed: 5
game: mnk
sandbox: none
limits: {{move_wall_s: 5.0}}
boards:
  small: {{text: "3 3 3"}}
entries:
  - path: {seeded}
  - path: {broken}
  - path: {plain}
stages:
  - {{name: league, planner: round_robin, boards: [small], games_per_pairing: 2}}
"""


def test_build_logs_and_stderr_travel_back_through_celery(tmp_path: Path) -> None:
    seeded = tmp_path / "seeded"
    seeded.mkdir()
    (seeded / "main.py").write_text(SEEDED)
    (seeded / "entry.yaml").write_text(
        'name: seeded\ngame: mnk\nprotocol: mnk\nrun: [python3, main.py, "{seed}"]\n'
    )
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "entry.yaml").write_text(
        "name: broken\ngame: mnk\nprotocol: mnk\n"
        "build: \"echo 'start of the log'; echo 'x.c:2:1: error: no such thing' >&2; exit 2\"\n"
        "run: [./a.out]\n"
    )
    config = tmp_path / "notes-celery.yaml"
    config.write_text(CONFIG.format(seeded=seeded, broken=broken, plain=FIXTURES / "mnk" / "first_empty"))
    run_dir = tmp_path / "runs" / "notes-celery"

    done = tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir)])
    assert "warning: entries wrote on stderr in 2 game(s): seeded" in done.stdout

    log = tourney("build-log", run_dir, "broken", cwd=tmp_path)
    assert log.returncode == 0, log.stderr
    assert "start of the log" in log.stdout and "x.c:2:1: error: no such thing" in log.stdout

    matches = tourney("matches", run_dir, cwd=tmp_path)
    assert matches.returncode == 0 and "stderr: seeded" in matches.stdout
    data = load_report_data(run_dir)
    for m, k, g in data.games():
        if set(g.order) == {"seeded", "first-empty"}:
            assert m.spec is not None and m.worker  # played by the Celery worker
            assert g.stderr["seeded"][0].startswith(f"seed {game_seed(m.spec.seed, k)}")
