"""The lines ``tourney fastchess`` / ``tourney cutechess`` print (runner/report/engine_lines.py),
read back by the parsers public tools use on fastchess's and cutechess-cli's output.

The parsers are restated here from their sources (read, not copied):

* chess-tuning-tools, ``tune/local.py`` ``parse_experiment_result`` (github.com/kiudee/
  chess-tuning-tools): ``re.findall(r"Score of.*:\\s*([0-9]+\\s-\\s[0-9]+\\s-\\s[0-9]+)")``
  over the whole output, the per-game differences of those running scores ordered by
  ``re.findall(r"Finished game ([0-9]+)")``, and games 2i, 2i+1 folded into a pentanomial;
* fishtest's worker, ``worker/games.py`` (github.com/official-stockfish/fishtest): the
  fastchess block's ``Games: ([0-9]+), Wins: ([0-9]+), Losses: ([0-9]+), Draws: ([0-9]+),
  Points: ([0-9.]+) \\(`` and ``Ptnml\\(0-2\\): \\[([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+),
  ([0-9]+)\\]``;
* OpenBench's client, ``Client/worker.py`` ``MatchRunner.update_results``
  (github.com/AndyGrant/OpenBench): ``Finished game`` lines split on white space (token 2 the
  game's number, token 6 its result), games 2k-1 and 2k a pair, the first engine White in the
  odd one; the reason after the first ``:`` searched for ``disconnect``, ``on time``, ``illegal``.
"""

from __future__ import annotations

import math
import re

import numpy as np

from runner.domain.match_values import GameRecord, Verdict, VerdictKind
from runner.domain.sprt import Pentanomial, SprtBounds, llr
from runner.report.engine_lines import MatchLines, SprtSpec, Stats, elo_wdl

A, B = "new", "base"
# each pair: the first engine's points in its White game, then in its Black game
PAIRS = [(1, 1), (1, 0.5), (0.5, 0.5), (1, 0), (0, 0.5), (0, 0), (1, 1), (0.5, 1), (0.5, 0), (1, 0.5), (0, 1)]


def game(white: str, black: str, white_points: float, *, verdict: Verdict | None = None) -> GameRecord:
    winner = None if white_points == 0.5 else white if white_points == 1 else black
    return GameRecord(
        order=[white, black],
        winner=winner,
        scores={white: int(white_points == 1), black: int(white_points == 0)},
        verdict=verdict or Verdict(VerdictKind.NORMAL),
        moves=[],
        reason="checkmate" if winner else "3-fold repetition",
    )


def pair(first_white: float, first_black: float) -> list[GameRecord]:
    return [game(A, B, first_white), game(B, A, 1 - first_black)]


def printed(style: str, pairs: list[tuple[float, float]], **kw: object) -> list[str]:
    out: list[str] = []
    lines = MatchLines(style=style, names=[A, B], emit=out.append, **kw)  # type: ignore[arg-type]
    for p in pairs:
        lines.add_pair(pair(*p))
    lines.finish()
    return out


def truth(pairs: list[tuple[float, float]]) -> tuple[tuple[int, int, int], list[int]]:
    """(wins, losses, draws) of the first engine and its pentanomial [LL, LD, DD+WL, WD, WW]."""
    points = [x for p in pairs for x in p]
    wld = (points.count(1), points.count(0), points.count(0.5))
    penta = [0] * 5
    for x, y in pairs:
        penta[int((x + y) * 2)] += 1
    return wld, penta


# -- the parsers, restated --------------------------------------------------------------------


def chess_tuning_tools_pentanomial(out: str) -> dict[str, int]:
    wdl_strings = re.findall(r"Score of.*:\s*([0-9]+\s-\s[0-9]+\s-\s[0-9]+)", out)
    array = np.array([[int(y) for y in re.findall(r"[0-9]+", x)] for x in wdl_strings])
    diffs = np.diff(array, axis=0, prepend=np.array([[0, 0, 0]]))
    finished = np.array([int(x) - 1 for x in re.findall(r"Finished game ([0-9]+)", out)])
    diffs = diffs[np.argsort(finished)]
    counts = {"WW": 0, "WD": 0, "WL/DD": 0, "LD": 0, "LL": 0}
    for i in range(0, len(diffs) - 1, 2):
        match = diffs[i] + diffs[i + 1]
        if match[0] == 2:
            counts["WW"] += 1
        elif match[0] == 1:
            counts["WL/DD" if match[1] == 1 else "WD"] += 1
        elif match[1] == 1:
            counts["LD"] += 1
        elif match[2] == 2:
            counts["WL/DD"] += 1
        else:
            counts["LL"] += 1
    return counts


FISHTEST_WLD = re.compile(
    r"Games: ([0-9]+), Wins: ([0-9]+), Losses: ([0-9]+), Draws: ([0-9]+), Points: ([0-9.]+) \("
)
FISHTEST_PTNML = re.compile(r"Ptnml\(0-2\): \[([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+), ([0-9]+)\]")


def openbench_results(lines: list[str]) -> dict[str, object]:
    results: dict[str, object] = {"pentanomial": [0] * 5, "trinomial": [0] * 3, "crashes": 0, "timelosses": 0}
    games: dict[int, str] = {}
    lookup = {"0-1": 0, "1/2-1/2": 1, "1-0": 2}
    for line in lines:
        if "Finished game" not in line:
            continue
        reason = line.split(":")[1]
        results["crashes"] = int(str(results["crashes"])) + ("disconnect" in reason or "stalls" in reason)
        results["timelosses"] = int(str(results["timelosses"])) + ("on time" in reason)
        tokens = line.split()
        number, result = int(tokens[2]), tokens[6]
        games[number] = result
        first, second = (number, number + 1) if number % 2 else (number - 1, number)
        if first in games and second in games:
            penta, tri = results["pentanomial"], results["trinomial"]
            assert isinstance(penta, list) and isinstance(tri, list)
            penta[lookup[games[first]] + 2 - lookup[games[second]]] += 1
            tri[lookup[games[first]]] += 1
            tri[2 - lookup[games[second]]] += 1
            del games[first], games[second]
    return results


# -- the tests ----------------------------------------------------------------------------------


def test_chess_tuning_tools_reads_the_pentanomial_from_the_cutechess_lines() -> None:
    out = "\n".join(printed("cutechess", PAIRS, ratinginterval=0))
    (w, l_, d), penta = truth(PAIRS)
    counts = chess_tuning_tools_pentanomial(out)
    assert [counts["LL"], counts["LD"], counts["WL/DD"], counts["WD"], counts["WW"]] == penta
    last = re.findall(r"Score of.*:\s*([0-9]+\s-\s[0-9]+\s-\s[0-9]+)", out)[-1]
    assert [int(x) for x in last.split(" - ")] == [w, l_, d]
    assert "Finished match" in out.splitlines()[-1]


def test_fishtest_reads_games_and_pentanomial_from_the_fastchess_block() -> None:
    lines = printed("fastchess", PAIRS, ratinginterval=4, sprt=SprtSpec(0, 5, 0.05, 0.05, "normalized"))
    (w, l_, d), penta = truth(PAIRS)
    blocks = [i for i, line in enumerate(lines) if FISHTEST_WLD.search(line)]
    assert len(blocks) == 3  # after pairs 4 and 8, and the final one
    wld = FISHTEST_WLD.search(lines[blocks[-1]])
    ptnml = FISHTEST_PTNML.search(lines[blocks[-1] + 1])
    assert wld is not None and ptnml is not None
    assert [int(wld.group(i)) for i in range(1, 5)] == [2 * len(PAIRS), w, l_, d]
    assert float(wld.group(5)) == w + d / 2
    assert [int(ptnml.group(i)) for i in range(1, 6)] == penta
    # fishtest's own check: twice the pairs are the games
    assert 2 * sum(penta) == int(wld.group(1))
    # the LLR line: fastchess's "LLR: x (y%) (lower, upper) [elo0, elo1]", the value ours
    llr_line = next(line for line in reversed(lines) if line.startswith("LLR: "))
    m = re.match(r"LLR: (-?[0-9.]+) \((-?[0-9.]+)%\) \((-?[0-9.]+), ([0-9.]+)\) \[0\.00, 5\.00\]", llr_line)
    assert m is not None
    want = llr(Pentanomial(tuple(penta)), 0, 5, "normalized")  # type: ignore[arg-type]
    assert float(m.group(1)) == round(want, 2)
    assert (float(m.group(3)), float(m.group(4))) == (
        round(math.log(0.05 / 0.95), 2),
        round(math.log(0.95 / 0.05), 2),
    )


def test_openbench_reads_pairs_and_verdicts_from_the_finished_game_lines() -> None:
    out: list[str] = []
    lines = MatchLines(style="fastchess", names=[A, B], emit=out.append, ratinginterval=0)
    for p in PAIRS:
        lines.add_pair(pair(*p))
    lost_on_time = Verdict(VerdictKind.TIMEOUT, B, "flag fell")
    crashed = Verdict(VerdictKind.CRASH, A, "segfault")
    lines.add_pair([game(A, B, 1, verdict=lost_on_time), game(B, A, 1, verdict=crashed)])
    _, penta = truth([*PAIRS, (1, 0)])
    results = openbench_results(out)
    assert results["pentanomial"] == penta
    assert results["timelosses"] == 1 and results["crashes"] == 1
    assert "Finished game 23 (new vs base): 1-0 {Black loses on time}" in out
    assert "Finished game 24 (base vs new): 1-0 {Black disconnects}" in out


def test_the_fastchess_block_is_fastchess_own_for_fishtests_sample() -> None:
    # worker/games.py quotes this block of fastchess's: its counts give the very same lines
    st = Stats(248, 266, 166)
    st.penta.update(LL=43, LD=61, WL=119, DD=25, WD=55, WW=37)
    out: list[str] = []
    lines = MatchLines(
        "fastchess", ["New", "Base"], out.append, header="0.601+0.006, 1t, 16MB, UHO_Lichess_4852_v1.epd"
    )
    lines.stats[("New", "Base")] = st
    lines.interval("New", "Base")
    assert out[1:6] == [
        "Results of New vs Base (0.601+0.006, 1t, 16MB, UHO_Lichess_4852_v1.epd):",
        "Elo: -9.20 +/- 20.93, nElo: -11.50 +/- 26.11",
        "LOS: 19.41 %, DrawRatio: 42.35 %, PairsRatio: 0.88",
        "Games: 680, Wins: 248, Losses: 266, Draws: 166, Points: 331.0 (48.68 %)",
        "Ptnml(0-2): [43, 61, 144, 55, 37], WL/DD Ratio: 4.76",
    ]


def test_cutechess_intervals_count_games_and_the_sprt_line_is_cutechess_format() -> None:
    lines = printed("cutechess", PAIRS[:3], ratinginterval=4, sprt=SprtSpec(0, 10, 0.05, 0.05, "logistic"))
    elo_lines = [i for i, line in enumerate(lines) if line.startswith("Elo difference:")]
    # after game 4, and at the end (game 6 is no multiple of 4)
    assert [lines[i - 4] for i in elo_lines] == [
        "Score of new vs base: 3 - 0 - 1  [0.875] 4",
        lines[elo_lines[1] - 4],
    ]
    m = re.match(
        r"Elo difference: (-?[0-9.]+|inf) \+/- ([0-9.]+|nan), LOS: ([0-9.]+) %, DrawRatio: ([0-9.]+) %",
        lines[elo_lines[-1]],
    )
    assert m is not None
    st = Stats(3, 0, 3)
    assert float(m.group(1)) == round(-400 * math.log10(1 / 0.75 - 1), 1)
    assert float(m.group(4)) == round(100 * 3 / 6, 1)
    assert float(m.group(3)) == round(100 * (0.5 + 0.5 * math.erf(3 / math.sqrt(6))), 1)
    sprt = re.match(
        r"SPRT: llr (-?[0-9.e+-]+) \((-?[0-9.]+)%\), lbound (-?[0-9.e+]+), ubound ([0-9.e+]+)$",
        lines[elo_lines[-1] + 1],
    )
    assert sprt is not None
    want = llr(Pentanomial((0, 0, 1, 1, 1)), 0, 10, "logistic")
    assert float(sprt.group(1)) == float(f"{want:.3g}")
    assert float(sprt.group(4)) == float(f"{SprtBounds.of(0.05, 0.05).upper:.3g}")
    assert elo_wdl(st).score == 0.75
