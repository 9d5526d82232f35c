"""The report's chess replay is a chess board people recognise (issue 35, item 7): pieces as
a chess GUI draws them on a checkered board, the last move's squares highlighted, each
move's eval and clock beside it; seen in headless Chromium, from a real ``tourney run``
of a fake UCI engine (its scripted fool's mate, every move reported at ``-0.25/3``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT, tourney
from tests.report.browser import headless_chromium

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}")

FAKE = ROOT / "tests" / "fixtures" / "chess" / "fake-uci"
KING, PAWN = "\u265a\ufe0e", "\u265f\ufe0e"


def squares(d: Any) -> list[list[str]]:
    """Each square's classes and text, rank 8 first."""
    cells: list[list[str]] = d.execute_script(
        "return Array.from(document.querySelectorAll('.viewer .board.chess .cell'))"
        ".map(c => [c.className, c.textContent])"
    )
    return cells


def test_the_chess_replay_is_a_checkered_board_with_pieces_last_move_eval_and_clock(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    config = {
        "name": "fools",
        "game": "chess",
        "each": {"tc": "5+0.1"},
        "entries": [{"path": str(FAKE), "include": ["fools-mate"], "variants": {"count": 2, "prefix": "fm"}}],
        "stages": [{"name": "rr", "planner": "round_robin", "games_per_pairing": 2}],
    }
    (tmp_path / "fools.yaml").write_text(json.dumps(config))
    done = tourney(
        "run", tmp_path / "fools.yaml", "--workers", "1", "--no-progress", cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    page = tmp_path / "runs" / "fools" / "report.html"

    with headless_chromium(tmp_path / "profile") as driver:
        driver.get(page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "footer"))
        button = driver.find_elements(By.CSS_SELECTOR, "button.open-replay")[0]
        driver.execute_script(
            "arguments[0].closest('details.matches').open = true;"
            "arguments[0].closest('details.match').open = true;"
            "arguments[0].scrollIntoView({block: 'center'});",
            button,
        )
        button.click()
        viewer = driver.find_element(By.CSS_SELECTOR, ".viewer")
        start = squares(driver)
        assert len(start) == 64
        # a checkered board: a8 light, b8 dark, a7 dark; h1 light
        assert [c[0].split()[2] for c in (start[0], start[1], start[8], start[63])] == [
            "light",
            "dark",
            "dark",
            "light",
        ]
        # pieces as glyphs, white's and black's told apart: e8 and e1 kings, a7 and a2 pawns
        assert (start[4][1], start[60][1], start[8][1], start[48][1]) == (KING, KING, PAWN, PAWN)
        assert "pb" in start[4][0].split() and "pw" in start[60][0].split()
        assert sum(1 for c in start if c[1]) == 32 and not any("last" in c[0] for c in start)

        viewer.find_element(By.CSS_SELECTOR, "button.next").click()  # 1. f3
        after = squares(driver)
        lit = [i for i, c in enumerate(after) if "last" in c[0].split()]
        assert lit == [45, 53]  # f3 and f2, the move's two squares
        assert after[45][1] == PAWN and after[53][1] == ""
        info = viewer.find_element(By.CSS_SELECTOR, ".info").text
        assert "f2f3" in info and "-0.25/3" in info and "clock 0:0" in info
        moves = [li.text for li in viewer.find_elements(By.CSS_SELECTOR, "ol.moves li")]
        assert len(moves) == 4 and all("-0.25/3" in m and "clock 0:0" in m for m in moves)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", viewer)
        assert driver.save_screenshot(str(tmp_path / "chess-replay.png"))
