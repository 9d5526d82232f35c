"""What each planner lets through and which boards it takes (runner.domain.stages.requirements)."""

from __future__ import annotations

from typing import Any

import pytest

from runner.domain.boards import BoardSpec
from runner.domain.stage_models import STAGE_ADAPTER
from runner.domain.stages.requirements import Admission, Objection, admission, board_objections


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
            Admission(4),  # beyond max_entrants the planner plays a balanced design instead
        ),
    ],
)
def test_admission(fields: dict[str, Any], n: int, expected: Admission) -> None:
    assert admission(stage(**fields), n) == expected


FIXED = BoardSpec.model_validate({"text": "-"})
PER_ROUND = BoardSpec.model_validate({"generate": {"width": 8, "height": 4}, "per_round": True})
NEEDS_A_BOARD_A_ROUND = (
    "every elimination round needs a different board: name one generated board with "
    "per_round: true, or list at least max_rounds fixed boards"
)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"planner": "round_robin", "boards": ["a", "a"]}, ()),
        ({"planner": "potm_elimination", "boards": ["r"]}, ()),
        ({"planner": "potm_elimination", "boards": ["a", "b"], "max_rounds": 2}, ()),
        ({"planner": "potm_elimination", "boards": ["a"]}, (Objection(("boards",), NEEDS_A_BOARD_A_ROUND),)),
        (
            {"planner": "potm_elimination", "boards": ["a", "b"], "max_rounds": 3},
            (Objection(("boards",), NEEDS_A_BOARD_A_ROUND),),
        ),
        (
            {"planner": "potm_elimination", "boards": ["r", "a"]},
            (Objection(("boards",), "a per_round board must be the stage's only board"),),
        ),
        (
            {"planner": "potm_elimination", "boards": ["a", "a"], "max_rounds": 2},
            (Objection(("boards",), "the boards must all differ (one per round)"),),
        ),
    ],
)
def test_board_objections(fields: dict[str, Any], expected: tuple[Objection, ...]) -> None:
    boards = {"a": FIXED, "b": FIXED, "r": PER_ROUND}
    assert board_objections(stage(**fields), boards) == expected
