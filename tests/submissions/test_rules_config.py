"""The ``submissions:`` section of a config: checked with its location like the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config import ConfigError, load_config, load_config_text

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _icfp_with(old: str, new: str) -> str:
    text = (CONFIGS / "icfp98.yaml").read_text()
    assert old in text
    return text.replace(old, new)


def _problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as e:
        load_config_text(text, file="c.yaml", base_dir=CONFIGS)
    return [str(p) for p in e.value.problems]


def test_shipped_configs_carry_the_seeds_rules() -> None:
    icfp = load_config(CONFIGS / "icfp98.yaml").submissions
    potm = load_config(CONFIGS / "potm94.yaml").submissions
    assert icfp is not None and potm is not None
    assert icfp.layout == "icfp98" and icfp.house == "greedy" and icfp.deadline.tzinfo is not None
    assert potm.layout == "potm" and potm.counts == "latest_ready" and set(potm.languages) == {"c", "py"}


def test_a_deadline_without_a_timezone_is_refused_at_its_line() -> None:
    text = _icfp_with("deadline: 2027-08-29T23:59:59-04:00", "deadline: 2027-08-29T23:59:59")
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if ln.startswith("  deadline:"))
    (problem,) = _problems(text)
    assert (
        problem.startswith(f"c.yaml:{line}:") and "submissions.deadline" in problem and "timezone" in problem
    )


def test_an_unknown_house_entry_is_named_with_a_suggestion() -> None:
    (problem,) = _problems(_icfp_with("house: greedy ", "house: gredy "))
    assert "submissions.house" in problem and "did you mean 'greedy'" in problem


def test_opens_after_the_deadline_and_an_unknown_layout_are_refused() -> None:
    text = _icfp_with("  layout: icfp98", "  opens: 2028-01-01T00:00:00Z\n  layout: icfp99")
    problems = _problems(text)
    assert any("icfp99" in p and "did you mean 'icfp98'" in p for p in problems)
    text = _icfp_with("  layout: icfp98", "  opens: 2028-01-01T00:00:00Z\n  layout: icfp98")
    assert any("must be before the deadline" in p for p in _problems(text))


def test_potm_layout_needs_its_languages() -> None:
    text = (CONFIGS / "potm94.yaml").read_text()
    cut = text[: text.index("  languages:")]
    assert any("layout potm needs languages" in p for p in _problems(cut))
