"""Opening books (runner/domain/openings.py, config `openings:`): EPD and PGN books become boards,
selected by order/start/count, each played as a game pair; a bad book is a located error."""

from __future__ import annotations

import json
from pathlib import Path

import chess
import pytest
import yaml

from runner.config import ConfigError, load_config
from runner.domain.openings import BookError, Opening, auto_per_match, read_book, select
from runner.domain.stages.tournament import match_spec
from tests.stages.sim import simulate

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_BOOK = ROOT / "configs" / "openings.epd"


def test_the_shipped_book_holds_20_legal_positions_made_from_the_start() -> None:
    book = read_book(SHIPPED_BOOK)
    assert [o.name for o in book] == [f"opening-{i:03d}" for i in range(1, 21)]
    assert len({o.fen for o in book}) == 20
    assert all(chess.Board(o.fen).is_valid() and chess.Board(o.fen).fullmove_number == 4 for o in book)


def test_selection_by_start_count_and_a_seeded_random_order() -> None:
    book = read_book(SHIPPED_BOOK)
    assert [o.name for o in select(book, order="sequential", start=3, count=2)] == [
        "opening-003",
        "opening-004",
    ]
    shuffled = [o.name for o in select(book, order="random", seed=5)]
    assert shuffled == [o.name for o in select(book, order="random", seed=5)]
    assert shuffled != [o.name for o in book] and sorted(shuffled) == [o.name for o in book]
    assert shuffled != [o.name for o in select(book, order="random", seed=6)]
    with pytest.raises(BookError, match="start 21 is past"):
        select(book, order="sequential", start=21)


def test_a_pgn_book_is_cut_at_plies(tmp_path: Path) -> None:
    book = tmp_path / "book.pgn"
    book.write_text('[Event "a"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n[Event "b"]\n\n1. d4 d5 2. c4 *\n')
    cut = read_book(book, plies=2)
    board = chess.Board()
    board.push_san("e4")
    board.push_san("e5")
    assert cut[0].fen == board.fen()
    assert len(read_book(book)) == 2 and chess.Board(read_book(book)[1].fen).fullmove_number == 2


def chess_project(tmp_path: Path, book_text: str, **openings: object) -> Path:
    for name in ("a", "b", "c"):
        d = tmp_path / "entries" / name
        d.mkdir(parents=True)
        (d / "entry.yaml").write_text(
            yaml.safe_dump({"name": name, "game": "chess", "protocol": "uci", "run": ["./engine"]})
        )
    (tmp_path / "book.epd").write_text(book_text)
    config = {
        "name": "book",
        "seed": 3,
        "game": "chess",
        "openings": {"file": "book.epd", **openings},
        "entries": [{"path": f"entries/{n}"} for n in ("a", "b", "c")],
        "stages": [{"name": "rr", "planner": "round_robin", "boards": ["openings"], "games_per_pairing": 2}],
    }
    path = tmp_path / "book.yaml"
    path.write_text(json.dumps(config, indent=1))
    return path


def test_every_opening_is_a_game_pair_of_every_pairing(tmp_path: Path) -> None:
    cfg = load_config(
        chess_project(tmp_path, SHIPPED_BOOK.read_text(), order="sequential", count=3, per_match=1)
    )
    assert cfg.stages[0].boards == ["opening-001", "opening-002", "opening-003"]
    state, _ = simulate(cfg)
    matches = state.matches
    assert len(matches) == 3 * 3  # 3 pairings x 3 openings, one match each
    for m in matches:
        a, b = m.players
        assert [list(o) for o in m.orders] in ([[a, b], [b, a]], [[b, a], [a, b]])  # colours swapped
        assert cfg.board_text(m.board_id) == read_book(SHIPPED_BOOK)[int(m.board_id[-3:]) - 1].fen


def test_a_bad_book_line_is_located_in_the_book(tmp_path: Path) -> None:
    lines = SHIPPED_BOOK.read_text().splitlines()
    lines[4] = "this is no position"
    with pytest.raises(ConfigError) as e:
        load_config(chess_project(tmp_path, "\n".join(lines) + "\n"))
    text = str(e.value)
    assert "openings.file:" in text and "book.epd:5: not an EPD position" in text


def test_per_match_plays_k_openings_in_one_match_and_per_match_1_one_each(tmp_path: Path) -> None:
    book = read_book(SHIPPED_BOOK)
    projects = [tmp_path / "default", tmp_path / "one", tmp_path / "two"]
    for d in projects:
        d.mkdir()
    default = load_config(chess_project(projects[0], SHIPPED_BOOK.read_text(), order="sequential", count=3))
    one = load_config(
        chess_project(projects[1], SHIPPED_BOOK.read_text(), order="sequential", count=3, per_match=1)
    )
    # per_match 1: one opening a match, each the opening's own board and no list of boards
    assert one.stages[0].boards == ["opening-001", "opening-002", "opening-003"]
    singles = list(simulate(one)[0].matches)
    assert len(singles) == 3 * 3 and all(match_spec(one, m).boards == () for m in singles)

    cfg = load_config(
        chess_project(projects[2], SHIPPED_BOOK.read_text(), order="sequential", count=3, per_match=2)
    )
    assert cfg.stages[0].boards == ["opening-001+opening-002", "opening-003"]  # the last group holds the rest
    state, _ = simulate(cfg)
    assert len(state.matches) == 3 * 2  # 3 pairings x 2 groups of openings
    grouped = next(m for m in state.matches if m.board_id == "opening-001+opening-002")
    spec = match_spec(cfg, grouped)
    games = spec.planned_games()
    a, b = grouped.orders[0]
    assert [(g.board_id, g.order) for g in games] == [
        ("opening-001", (a, b)),
        ("opening-001", (b, a)),
        ("opening-002", (a, b)),
        ("opening-002", (b, a)),
    ]
    assert [g.board_text for g in games] == [book[0].fen] * 2 + [book[1].fen] * 2
    single = match_spec(cfg, next(m for m in state.matches if m.board_id == "opening-003"))
    assert single.boards == () and single.board_text == book[2].fen
    # the default (auto) of 3 openings is 2 a match: the same matches, ids and specs as per_match 2
    plans = list(simulate(default)[0].matches)
    assert [m.match_id for m in plans] == [m.match_id for m in state.matches]
    assert [match_spec(default, m) for m in plans] == [match_spec(cfg, m) for m in state.matches]


def _group(first: int, end: int) -> str:
    return "+".join(f"opening-{i:03d}" for i in range(first, end))


@pytest.mark.parametrize(
    ("count", "boards"),
    [
        (1, ["opening-001"]),
        (2, ["opening-001", "opening-002"]),
        (10, [_group(1, 6), _group(6, 11)]),
        (20, [_group(1, 9), _group(9, 17), _group(17, 21)]),
    ],
)
def test_auto_groups_up_to_8_openings_a_match_and_at_least_2_matches_a_pairing(
    tmp_path: Path, count: int, boards: list[str]
) -> None:
    """The default ``per_match: auto`` (issue 35, item 8): engines kept across openings as fastchess
    keeps them, yet a pairing of 2 or more openings still 2 matches or more (both slots busy)."""
    assert [auto_per_match(n) for n in (1, 2, 3, 4, 5, 10, 16, 17, 100)] == [1, 1, 2, 2, 3, 5, 8, 8, 8]
    path = chess_project(tmp_path, SHIPPED_BOOK.read_text(), order="sequential", count=count)
    cfg = load_config(path)
    assert cfg.stages[0].boards == boards
    # a rule of the config alone: loaded again (a resumed run), the same matches and specs
    again = load_config(path)
    first, second = simulate(cfg)[0].matches, simulate(again)[0].matches
    assert [m.match_id for m in first] == [m.match_id for m in second]
    assert [match_spec(cfg, m) for m in first] == [match_spec(again, m) for m in second]
    pairing = [m for m in first if m.players == first[0].players]
    played = [g.board_id for m in pairing for g in match_spec(cfg, m).planned_games()]
    assert played == [f"opening-{i:03d}" for i in range(1, count + 1) for _ in (0, 1)]  # pairs, in order


def test_per_match_must_be_auto_or_a_whole_number_of_at_least_1(tmp_path: Path) -> None:
    for bad in (0, "some"):
        d = tmp_path / str(bad)
        d.mkdir()
        with pytest.raises(ConfigError) as e:
            load_config(chess_project(d, SHIPPED_BOOK.read_text(), per_match=bad))
        assert "openings.per_match" in str(e.value)


@pytest.mark.parametrize("per_match", [2, "auto"])
def test_an_sprt_stage_keeps_one_opening_a_match_whatever_per_match_says(
    tmp_path: Path, per_match: object
) -> None:
    path = chess_project(tmp_path, SHIPPED_BOOK.read_text(), order="sequential", count=3, per_match=per_match)
    config = json.loads(path.read_text())
    config["entries"] = config["entries"][:2]
    config["stages"] = [
        {"name": "test", "planner": "sprt", "boards": ["openings"], "elo0": 0, "elo1": 5, "max_pairs": 10}
    ]
    path.write_text(json.dumps(config))
    cfg = load_config(path)
    assert cfg.stages[0].boards == ["opening-001", "opening-002", "opening-003"]


def test_a_count_above_the_book_wraps_as_fastchess_rounds_do() -> None:
    """Issue 35, item 5: ``count`` past the book was cut silently to the book's size."""
    book = [Opening(f"opening-00{i}", f"fen{i}") for i in (1, 2, 3)]
    got = select(book, order="sequential", start=2, count=5)
    names = ["opening-002", "opening-003", "opening-002_2", "opening-003_2", "opening-002_3"]
    assert [o.name for o in got] == names
    assert [o.fen for o in got] == ["fen2", "fen3", "fen2", "fen3", "fen2"]


def test_auto_leaves_a_board_a_round_stage_one_opening_a_round(tmp_path: Path) -> None:
    """A knockout plays a board a round: under ``auto`` it keeps one opening a round (its
    rounds as before), while the round robin beside it groups them; an explicit number groups
    both, as it always did."""
    for per_match, knockout in (("auto", ["opening-001", "opening-002", "opening-003", "opening-004"]),
                                (2, ["opening-001+opening-002", "opening-003+opening-004"])):  # fmt: skip
        d = tmp_path / str(per_match)
        d.mkdir()
        path = chess_project(d, SHIPPED_BOOK.read_text(), order="sequential", count=4, per_match=per_match)
        config = json.loads(path.read_text())
        config["stages"].append({"name": "ko", "planner": "knockout", "boards": ["openings"]})
        path.write_text(json.dumps(config))
        cfg = load_config(path)
        assert cfg.stages[0].boards == ["opening-001+opening-002", "opening-003+opening-004"]
        assert cfg.stages[1].boards == knockout


def test_a_new_runs_auto_fits_its_local_slots_and_an_explicit_number_stays(tmp_path: Path) -> None:
    """``per_match: auto`` of 10 openings is 5 a match (2 matches a pairing); a new run with 8
    local slots shared by its 3 entries' pairings (at least 2) lowers it so that each slot has a
    match (``fit_openings_to_slots``: 4 slots a pairing, 3 openings a match); 1 or 2 slots
    leave it; an explicit number is the config's whatever the slots."""
    assert [auto_per_match(10, s) for s in (1, 2, 3, 4, 8, 16)] == [5, 5, 4, 3, 2, 1]
    assert [auto_per_match(40, s) for s in (1, 2, 4, 8, 16)] == [8, 8, 8, 5, 3]
    projects = {name: tmp_path / name for name in ("auto", "two", "fixed")}
    for d in projects.values():
        d.mkdir()
    fitted = load_config(
        chess_project(projects["auto"], SHIPPED_BOOK.read_text(), order="sequential", count=10)
    )
    assert fitted.openings_per_match == 5
    fitted.fit_openings_to_slots(8)
    assert fitted.openings_per_match == 3
    assert fitted.stages[0].boards == [_group(1, 4), _group(4, 7), _group(7, 10), "opening-010"]
    two = load_config(chess_project(projects["two"], SHIPPED_BOOK.read_text(), order="sequential", count=10))
    two.fit_openings_to_slots(2)
    assert two.openings_per_match == 5
    fixed = load_config(
        chess_project(projects["fixed"], SHIPPED_BOOK.read_text(), order="sequential", count=10, per_match=5)
    )
    fixed.fit_openings_to_slots(16)
    assert fixed.openings_per_match == 5
