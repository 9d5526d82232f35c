"""The report's SPSA chart (runner.report.tuning): one well-formed inline SVG per option whose
line goes through θ at each iteration, higher values drawn higher."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from runner.domain.spsa import TunedParam, TuningPath
from runner.report.tuning import LEFT, RIGHT, WIDTH, tuned_rows

SVG = "{http://www.w3.org/2000/svg}"


def _points(svg_text: str) -> list[tuple[float, ...]]:
    line = ET.fromstring(svg_text).find(f"{SVG}polyline")
    assert line is not None
    return [tuple(map(float, p.split(","))) for p in str(line.get("points")).split()]


def test_each_option_is_a_chart_of_its_path_against_the_pairs() -> None:
    path = TuningPath(
        pairs=(0, 8, 16, 24),
        params=(
            TunedParam("Skill Level", 0, 20, (5.0, 7.5, 9.0, 8.25)),
            TunedParam("A & <B>", -100, 100, (0.0, 0.0, 0.0, 0.0)),  # flat, and a name to escape
        ),
        total=32,
    )
    rows = tuned_rows(path)
    assert [(r.name, r.start, r.tuned, r.low, r.high) for r in rows] == [
        ("Skill Level", 5.0, 8.25, 0, 20),
        ("A & <B>", 0.0, 0.0, -100, 100),
    ]
    for row in rows:
        svg = ET.fromstring(row.svg)  # well-formed: the page embeds it as is
        points = _points(row.svg)
        assert len(points) == 4 and len(svg.findall(f"{SVG}circle")) == 4
        xs = [x for x, _ in points]
        assert xs == sorted(xs) and xs[0] < xs[-1]
        # the x axis runs to the tuning's end: the last point (24 of 32 pairs) is 3/4 along
        assert xs[0] == LEFT and xs[3] == LEFT + (WIDTH - LEFT - RIGHT) * 24 / 32
    skill = _points(rows[0].svg)
    ys = [y for _, y in skill]
    assert ys[1] < ys[0] and ys[2] < ys[1] and ys[2] < ys[3]  # SVG y grows downwards
    assert "<title>Skill Level: 5 to 8.25 over 24 of 32 pairs</title>" in rows[0].svg
    assert "A &amp; &lt;B&gt;" in rows[1].svg and "<B>" not in rows[1].svg
