"""The lines fastchess and cutechess-cli print while a match plays, from tourney's accepted
results (docs/engines.md, "tourney fastchess and tourney cutechess").

Scripts and tuners read these lines with regular expressions, so their words, spacing and
number formats are the tools' own (read from their sources: fastchess's
``output_fastchess.hpp``, ``output_cutechess.hpp``, ``elo_wdl.cpp``, ``elo_pentanomial.cpp``;
cutechess's ``enginematch.cpp``, ``tournament.cpp``, ``elo.cpp``):

    Finished game 3 (A vs B): 1-0 {White mates}
    Score of A vs B: 5 - 3 - 2  [0.600] 10                              (cutechess, each game)
    ...      A playing White: 3 - 1 - 1  [0.700] 5
    Elo difference: 70.4 +/- 120.9, LOS: 87.6 %, DrawRatio: 20.0 %       (cutechess, each interval)
    SPRT: llr 0.41 (14.0%), lbound -2.94, ubound 2.94
    --------------------------------------------------                    (fastchess, each interval)
    Results of A vs B (10+0.1, 1t, 16MB, book.epd):
    Elo: 70.44 +/- 120.90, nElo: 80.00 +/- 130.00
    LOS: 87.60 %, DrawRatio: 20.00 %, PairsRatio: 2.00
    Games: 10, Wins: 5, Losses: 3, Draws: 2, Points: 6.0 (60.00 %)
    Ptnml(0-2): [0, 1, 2, 1, 1], WL/DD Ratio: 1.00
    LLR: 0.41 (14.0%) (-2.94, 2.94) [0.00, 5.00]
    --------------------------------------------------

A match of tourney's is a colour-swapped game pair (the first engine White in its first
game): its two games are numbered 2k+1 and 2k+2 in the order the pairs are accepted, so the
numbers pair up as both tools' do (what tuners that rebuild pentanomials from ``Finished game``
lines rely on). Intervals count pairs (fastchess with pentanomial reports) or games (cutechess).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

from runner.domain.match_values import GameRecord, VerdictKind
from runner.domain.sprt import Pentanomial, SprtBounds, SprtModel, llr

LINE = "-" * 50
Z95 = NormalDist().inv_cdf(0.975)


@dataclass
class Stats:
    """Games and pairs from one engine's side (fastchess's ``Stats``)."""

    wins: int = 0
    losses: int = 0
    draws: int = 0
    white_wins: int = 0
    white_losses: int = 0
    white_draws: int = 0
    # pairs: LL, LD, WL, DD, WD, WW (WL and DD apart, as fastchess keeps them)
    penta: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("LL", "LD", "WL", "DD", "WD", "WW"), 0)
    )

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def pairs(self) -> int:
        return sum(self.penta.values())

    def add_pair(self, first: float, second: float) -> None:
        """A pair whose games scored ``first`` and ``second`` (1, 1/2, 0) for this side."""
        for score in (first, second):
            if score == 1:
                self.wins += 1
            elif score == 0:
                self.losses += 1
            else:
                self.draws += 1
        key = {2.0: "WW", 1.5: "WD", 0.5: "LD", 0.0: "LL"}.get(first + second)
        if key is None:  # one point: a win and a loss, or two draws
            key = "DD" if first == 0.5 else "WL"
        self.penta[key] += 1

    def pentanomial(self) -> Pentanomial:
        p = self.penta
        return Pentanomial((p["LL"], p["LD"], p["WL"] + p["DD"], p["WD"], p["WW"]))


def _elo(score: float) -> float:
    """-400 log10(1/score - 1), infinite at 0 and 1 (and NaN past them), as C's math prints it."""
    if math.isnan(score):
        return math.nan
    if score >= 1:
        return math.inf if score == 1 else math.nan
    if score <= 0:
        return -math.inf if score == 0 else math.nan
    return -400.0 * math.log10(1.0 / score - 1.0)


def _div(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def _fmt(value: float, spec: str) -> str:
    """Like fmt/printf: ``inf``, ``-inf``, ``nan`` for what is not finite."""
    if math.isnan(value):
        return "nan" if not spec.endswith("%") else "nan%"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value + 0.0, spec)  # + 0.0: -0.0 prints as 0.00


@dataclass(frozen=True)
class EloView:
    """Elo and normalized Elo with their 95% half-widths, and LOS (fastchess ``EloWDL`` /
    ``EloPentanomial``)."""

    diff: float
    error: float
    ndiff: float
    nerror: float
    los: float  # percent
    score: float


def elo_wdl(s: Stats) -> EloView:
    n = s.games
    score = (s.wins + 0.5 * s.draws) / n
    w, d, l_ = s.wins / n, s.draws / n, s.losses / n
    var = w * (1 - score) ** 2 + d * (0.5 - score) ** 2 + l_ * score**2
    per_game = var / n
    up, lo = score + Z95 * math.sqrt(per_game), score - Z95 * math.sqrt(per_game)

    def nelo(x: float) -> float:
        return _div(x - 0.5, math.sqrt(var)) * (800 / math.log(10))

    los = (1 - math.erf(-_div(score - 0.5, math.sqrt(2.0 * per_game)))) / 2.0
    return EloView(
        _elo(score), (_elo(up) - _elo(lo)) / 2, nelo(score), (nelo(up) - nelo(lo)) / 2, los * 100, score
    )


def elo_penta(s: Stats) -> EloView:
    n = s.pairs
    p = {k: v / n for k, v in s.penta.items()}
    score = p["WW"] + 0.75 * p["WD"] + 0.5 * (p["WL"] + p["DD"]) + 0.25 * p["LD"]
    var = (
        p["WW"] * (1 - score) ** 2
        + p["WD"] * (0.75 - score) ** 2
        + (p["WL"] + p["DD"]) * (0.5 - score) ** 2
        + p["LD"] * (0.25 - score) ** 2
        + p["LL"] * score**2
    )
    per_pair = var / n
    up, lo = score + Z95 * math.sqrt(per_pair), score - Z95 * math.sqrt(per_pair)

    def nelo(x: float) -> float:
        return _div(x - 0.5, math.sqrt(2 * var)) * (800 / math.log(10))

    los = (1 - math.erf(-_div(score - 0.5, math.sqrt(2.0 * per_pair)))) / 2.0
    return EloView(
        _elo(score), (_elo(up) - _elo(lo)) / 2, nelo(score), (nelo(up) - nelo(lo)) / 2, los * 100, score
    )


@dataclass(frozen=True)
class SprtSpec:
    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: SprtModel


def finished_reason(game: GameRecord) -> str:
    """The braces of ``Finished game``, in cutechess's words (``White mates``, ``Black loses on
    time``, ``Draw by 3-fold repetition``...), which tuners search for (``on time``,
    ``disconnect``, ``illegal``)."""
    sides = {name: side for name, side in zip(game.order, ("White", "Black"), strict=False)}
    v = game.verdict
    if v.kind is not VerdictKind.NORMAL:
        side = sides.get(v.player or "", "An engine")
        words = {
            VerdictKind.TIMEOUT: "loses on time",
            VerdictKind.ILLEGAL_MOVE: "makes an illegal move",
            VerdictKind.BAD_OUTPUT: "makes an illegal move",
            VerdictKind.RESIGN: "resigns",
            VerdictKind.BUILD_FAILED: "disconnects (build failed)",
            VerdictKind.SYSTEM_ERROR: "game interrupted",
        }.get(v.kind, "disconnects")
        return f"{side} {words}" + (
            f": {v.detail}" if v.detail and v.kind is VerdictKind.ILLEGAL_MOVE else ""
        )
    reason = game.reason
    winner = sides.get(game.winner or "")
    if reason == "checkmate" and winner:
        return f"{winner} mates"
    if reason.startswith("adjudication"):
        tb = ": SyzygyTB" if "tablebase" in reason else ""
        return f"{winner} wins by adjudication{tb}" if winner else f"Draw by adjudication{tb}"
    draws = {
        "stalemate": "Draw by stalemate",
        "insufficient material": "Draw by insufficient mating material",
        "3-fold repetition": "Draw by 3-fold repetition",
        "50-move rule": "Draw by fifty moves rule",
    }
    if reason in draws:
        return draws[reason]
    if game.stopped_by:
        return f"{winner} wins by adjudication" if winner else "Draw by adjudication"
    return reason or ("Draw" if winner is None else f"{winner} wins")


def result_word(game: GameRecord) -> str:
    if game.winner is None:
        return "*" if game.verdict.kind is VerdictKind.SYSTEM_ERROR else "1/2-1/2"
    return "1-0" if game.winner == game.order[0] else "0-1"


def _points(game: GameRecord, name: str) -> float:
    if game.winner is None:
        return 0.5
    return 1.0 if game.winner == name else 0.0


@dataclass
class MatchLines:
    """The printed lines of a fastchess/cutechess match, fed pair by pair (module doc).

    ``style``: ``fastchess`` or ``cutechess`` (the lines' format); ``names`` in command-line
    order (the first is ``A`` of ``Score of A vs B``); ``header`` the fastchess results header's
    parenthesis (``10+0.1, 1t, 16MB, book.epd``)."""

    style: str
    names: list[str]
    emit: Callable[[str], None]
    ratinginterval: int = 10
    scoreinterval: int = 1
    penta: bool = True
    sprt: SprtSpec | None = None
    header: str = ""
    total_games: int = 0
    games_done: int = 0
    pairs_done: int = 0
    stats: dict[tuple[str, str], Stats] = field(default_factory=dict)

    def add_pair(self, games: Sequence[GameRecord], *, quiet: bool = False) -> None:
        """One accepted match (a game pair, or the games of one); ``quiet``: only count it
        (the pairs a resumed run had already played)."""
        played = [g for g in games if g.verdict.kind is not VerdictKind.SYSTEM_ERROR]
        if not played:
            return
        a, b = self._sides(played[0])
        st = self.stats.setdefault((a, b), Stats())
        for number, game in enumerate(played):
            self.games_done += 1
            if not quiet:
                self.emit(
                    f"Finished game {self.games_done} ({game.order[0]} vs {game.order[1]}): "
                    f"{result_word(game)} {{{finished_reason(game)}}}"
                )
            if game.order[0] == a:
                st.white_wins += game.winner == a
                st.white_losses += game.winner == b
                st.white_draws += game.winner is None
            if number % 2 == 1:  # the pair is complete
                st.add_pair(_points(played[number - 1], a), _points(game, a))
                self.pairs_done += 1
                if not quiet:
                    self._after_game(a, b, st, pair_done=True)
            elif not quiet and self.style == "cutechess":
                # cutechess prints the running score after every game: a pair's first game counts
                # in a copy of the stats as a game (the pair is added whole at its second)
                provisional = Stats(st.wins, st.losses, st.draws)
                score = _points(game, a)
                provisional.wins += score == 1
                provisional.losses += score == 0
                provisional.draws += score == 0.5
                self._after_game(a, b, provisional, pair_done=False)

    def _sides(self, game: GameRecord) -> tuple[str, str]:
        """(A, B) of the encounter, A the engine earlier on the command line."""
        x, y = game.order[0], game.order[1]
        order = {n: i for i, n in enumerate(self.names)}
        return (x, y) if order.get(x, 0) <= order.get(y, 0) else (y, x)

    def _after_game(self, a: str, b: str, st: Stats, *, pair_done: bool) -> None:
        last = self.total_games and self.games_done >= self.total_games
        if self.style == "cutechess":
            self.emit(self.score_line(a, b, st))
            if self.ratinginterval and self.games_done % self.ratinginterval == 0:
                self.interval(a, b)
        else:
            if pair_done and self.ratinginterval and self.pairs_done % self.ratinginterval == 0 and not last:
                self.interval(a, b)

    def score_line(self, a: str, b: str, st: Stats) -> str:
        """cutechess: ``Score of A vs B: W - L - D  [ratio] N``."""
        n = st.games
        ratio = (st.wins + st.draws / 2) / n
        return f"Score of {a} vs {b}: {st.wins} - {st.losses} - {st.draws}  [{ratio:.3f}] {n}"

    def interval(self, a: str | None = None, b: str | None = None) -> None:
        if a is None or b is None:
            if not self.stats:
                return
            a, b = next(iter(self.stats))
        st = self.stats.get((a, b))
        if st is None or st.games == 0:
            return
        if self.style == "cutechess":
            for line in self._cutechess_results(a, st):
                self.emit(line)
        else:
            for line in self._fastchess_results(a, b, st):
                self.emit(line)

    # -- cutechess ----------------------------------------------------------------
    def _cutechess_results(self, a: str, st: Stats) -> list[str]:
        out = []
        white = st.white_wins + st.white_losses + st.white_draws
        black_w, black_l = st.wins - st.white_wins, st.losses - st.white_losses
        black_d = st.draws - st.white_draws
        black = black_w + black_l + black_d
        if white:
            ratio = (2 * st.white_wins + st.white_draws) / (white * 2)
            out.append(
                f"...      {a} playing White: {st.white_wins} - {st.white_losses} - {st.white_draws}  "
                f"[{ratio:.3f}] {white}"
            )
        if black:
            ratio = (2 * black_w + black_d) / (black * 2)
            out.append(
                f"...      {a} playing Black: {black_w} - {black_l} - {black_d}  [{ratio:.3f}] {black}"
            )
        if st.games:
            ww = st.white_wins + black_l  # White's wins
            wl = st.white_losses + black_w
            ratio = (ww + st.draws / 2) / st.games
            out.append(f"...      White vs Black: {ww} - {wl} - {st.draws}  [{ratio:.3f}] {st.games}")
        n = st.games
        mu = (st.wins + st.draws / 2) / n
        dev = (st.wins / n) * (1 - mu) ** 2 + (st.losses / n) * mu**2 + (st.draws / n) * (0.5 - mu) ** 2
        stdev = math.sqrt(dev) / math.sqrt(n)
        error = (_elo(mu + Z95 * stdev) - _elo(mu - Z95 * stdev)) / 2
        decisive = st.wins + st.losses
        los = (
            100 * (0.5 + 0.5 * math.erf(_div(st.wins - st.losses, math.sqrt(2.0 * decisive))))
            if decisive
            else 50.0
        )
        out.append(
            f"Elo difference: {_fmt(_elo(mu), '.1f')} +/- {_fmt(error, '.1f')}, LOS: {_fmt(los, '.1f')} %, "
            f"DrawRatio: {100 * st.draws / n:.1f} %"
        )
        if self.sprt is not None:
            value, bounds = self._llr(st)
            result = (
                " - H1 was accepted"
                if value >= bounds.upper
                else " - H0 was accepted"
                if value <= bounds.lower
                else ""
            )
            out.append(
                f"SPRT: llr {value:.3g} ({value / bounds.upper * 100:.1f}%), lbound {bounds.lower:.3g}, "
                f"ubound {bounds.upper:.3g}{result}"
            )
        return out

    # -- fastchess ----------------------------------------------------------------
    def _fastchess_results(self, a: str, b: str, st: Stats) -> list[str]:
        elo = elo_penta(st) if self.penta and st.pairs else elo_wdl(st)
        draw_ratio = (
            100.0 * (st.penta["WL"] + st.penta["DD"]) / st.pairs
            if self.penta and st.pairs
            else 100.0 * st.draws / st.games
        )
        out = [
            LINE,
            f"Results of {a} vs {b} ({self.header}):",
            f"Elo: {_fmt(elo.diff, '.2f')} +/- {_fmt(elo.error, '.2f')}, "
            f"nElo: {_fmt(elo.ndiff, '.2f')} +/- {_fmt(elo.nerror, '.2f')}",
        ]
        pairs_ratio = _div(st.penta["WW"] + st.penta["WD"], st.penta["LD"] + st.penta["LL"])
        out.append(
            f"LOS: {_fmt(elo.los, '.2f')} %, DrawRatio: {draw_ratio:.2f} %"
            + (f", PairsRatio: {_fmt(pairs_ratio, '.2f')}" if self.penta else "")
        )
        points = st.wins + 0.5 * st.draws
        out.append(
            f"Games: {st.games}, Wins: {st.wins}, Losses: {st.losses}, Draws: {st.draws}, "
            f"Points: {points:.1f} ({points / st.games * 100:.2f} %)"
        )
        if self.penta:
            p = st.penta
            out.append(
                f"Ptnml(0-2): [{p['LL']}, {p['LD']}, {p['WL'] + p['DD']}, {p['WD']}, {p['WW']}], "
                f"WL/DD Ratio: {_fmt(_div(p['WL'], p['DD']), '.2f')}"
            )
        if self.sprt is not None:
            value, bounds = self._llr(st)
            fraction = value / bounds.upper if value >= 0 else -value / bounds.lower
            out.append(
                f"LLR: {value:.2f} ({fraction * 100:.1f}%) ({bounds.lower:.2f}, {bounds.upper:.2f}) "
                f"[{self.sprt.elo0:.2f}, {self.sprt.elo1:.2f}]"
            )
        out.append(LINE)
        return out

    def _llr(self, st: Stats) -> tuple[float, SprtBounds]:
        assert self.sprt is not None
        s = self.sprt
        bounds = SprtBounds.of(s.alpha, s.beta)
        value = llr(st.pentanomial(), s.elo0, s.elo1, s.model) if st.pairs else 0.0
        return value, bounds

    def finish(self, decision: str = "") -> None:
        """The last interval and the tool's closing line (``decision``: the SPRT stage's)."""
        if self.stats:
            a, b = next(iter(self.stats))
            if self.style == "cutechess":
                if not self.ratinginterval or self.games_done % self.ratinginterval:
                    self.interval(a, b)
            else:
                self.interval(a, b)
        if self.style == "cutechess":
            self.emit("Finished match")
        elif self.sprt is not None and decision.startswith(("H0", "H1")):
            s = self.sprt
            self.emit(f"SPRT ([{s.elo0:.2f}, {s.elo1:.2f}]) completed - {decision[:2]} was accepted")
        else:
            self.emit("Tournament finished")
