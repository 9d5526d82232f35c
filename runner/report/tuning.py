"""An spsa stage's tuning in the report: the tuned values and each option's path as a plot.

The planner hands its ``TuningPath`` (``runner.domain.spsa``) to the stage's state; here each
option becomes one small inline SVG line chart of θ against the game pairs played (the page
stays one file with no script or network for it), and a table of start and tuned values.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from runner.domain.spsa import TunedParam, TuningPath

WIDTH, HEIGHT = 420, 160
#: the plot area inside the chart: room on the left for the value ticks, below for the pairs
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 28


@dataclass(frozen=True)
class TunedRow:
    """One option in the report's table: where it started, where it is, and its path."""

    name: str
    start: float
    tuned: float
    low: float
    high: float
    svg: str


def _span(p: TunedParam) -> tuple[float, float]:
    """The values the chart shows: the path's own, widened a little (and never empty)."""
    lo, hi = min(p.values), max(p.values)
    pad = max((hi - lo) * 0.1, (p.high - p.low) * 0.02)
    lo, hi = max(lo - pad, p.low), min(hi + pad, p.high)
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


def _num(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def path_svg(p: TunedParam, pairs: tuple[int, ...], total: int) -> str:
    """One option's θ against the pairs played, 0 .. ``total``, as an SVG element."""
    lo, hi = _span(p)
    w, h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(k: int) -> float:
        return LEFT + w * k / max(total, 1)

    def y(v: float) -> float:
        return TOP + h * (hi - v) / (hi - lo)

    points = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in zip(pairs, p.values, strict=True))
    name = escape(p.name)
    parts = [
        f'<svg class="tuning" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{name}: theta against game pairs">',
        f"<title>{name}: {_num(p.start)} to {_num(p.last)} over {pairs[-1]} of {total} pairs</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="#bbb"/>',
    ]
    for v in (lo, (lo + hi) / 2, hi):
        parts.append(
            f'<text x="{LEFT - 4}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="11">{_num(v)}</text>'
        )
    if lo < p.start < hi:  # where it started, for the eye
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + w}" y1="{y(p.start):.1f}" y2="{y(p.start):.1f}" '
            'stroke="#999" stroke-dasharray="4 3"/>'
        )
    for k in (0, total):
        parts.append(
            f'<text x="{x(k):.1f}" y="{HEIGHT - BOTTOM + 14}" text-anchor="middle" font-size="11">{k}</text>'
        )
    parts.append(
        f'<text x="{LEFT + w / 2:.1f}" y="{HEIGHT - 4}" text-anchor="middle" font-size="11">game pairs</text>'
    )
    parts.append(f'<polyline fill="none" stroke="#1f6feb" stroke-width="2" points="{points}"/>')
    for k, v in zip(pairs, p.values, strict=True):
        parts.append(f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="2.5" fill="#1f6feb"/>')
    parts.append("</svg>")
    return "".join(parts)


def tuned_rows(path: TuningPath) -> list[TunedRow]:
    """The report's table for a tuning: each option with its chart."""
    return [
        TunedRow(p.name, p.start, p.last, p.low, p.high, path_svg(p, path.pairs, path.total))
        for p in path.params
    ]
