"""What each planner lets through, as the config checks ask it (runner.stages.admission)."""

from __future__ import annotations

from typing import Any

import pytest

from runner.config.models import STAGE_ADAPTER
from runner.stages.admission import Admission, Objection, admission


def stage(**fields: Any) -> Any:
    return STAGE_ADAPTER.validate_python({"name": "s", **fields})


@pytest.mark.parametrize(
    ("fields", "n", "expected"),
    [
        ({"planner": "round_robin"}, 5, Admission(5)),
        ({"planner": "round_robin", "advance": {"top": 3}}, 5, Admission(3)),
        (
            {"planner": "round_robin", "advance": {"top": 6}},
            5,
            Admission(
                5,
                (
                    Objection(
                        ("advance", "top"),
                        "cannot advance the top 6: at most 5 entrant(s) come out of stage 's'",
                    ),
                ),
            ),
        ),
        ({"planner": "system_test"}, 1, Admission(1)),
        (
            {"planner": "round_robin"},
            1,
            Admission(1, (Objection((), "stage 's' can have at most 1 entrant(s); it needs at least 2"),)),
        ),
        ({"planner": "round_robin", "when": "tied_for_first"}, 1, Admission(1)),
        ({"planner": "potm_elimination", "k": 2, "max_rounds": 1}, 20, Admission(6)),
        (
            {"planner": "potm_elimination", "k": 3, "max_rounds": 1},
            6,
            Admission(
                6,
                (
                    Objection(
                        ("k",),
                        "at most 6 entrants reach stage 's': with k=3 the winners bracket stops at 6, "
                        "so no round would be played; lower k or drop the stage",
                    ),
                ),
            ),
        ),
        ({"planner": "knockout"}, 8, Admission(1)),
        ({"planner": "knockout", "advance": "all"}, 8, Admission(8)),
        ({"planner": "swiss", "rounds": 3}, 4, Admission(4)),
        (
            {"planner": "swiss", "rounds": 4},
            4,
            Admission(
                4,
                (
                    Objection(
                        ("rounds",),
                        "4 rounds without repeats need at least 5 entrants; at most 4 reach this stage",
                    ),
                ),
            ),
        ),
        (
            {"planner": "permutations", "max_entrants": 3},
            4,
            Admission(4, (Objection((), "up to 4 entrants would play 4! orders; max_entrants is 3"),)),
        ),
    ],
)
def test_admission(fields: dict[str, Any], n: int, expected: Admission) -> None:
    assert admission(stage(**fields), n) == expected
