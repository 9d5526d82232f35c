"""Where a worker puts back a task it passes on (``workers.passed_on``): at the head the first
time, at the tail once it took it back (alone on the queue, it would take it back forever)."""

from __future__ import annotations

from workers.passed_on import PassedOn


def test_a_task_taken_back_goes_to_the_tail_and_others_still_go_to_the_head() -> None:
    passed = PassedOn()
    assert passed.at_head("verify-a") is True
    assert passed.at_head("verify-a") is False  # nobody else took it: behind the other tasks
    assert passed.at_head("verify-a") is False
    assert passed.at_head("copy-b") is True


def test_only_the_most_recent_tasks_are_remembered() -> None:
    passed = PassedOn(remembered=2)
    for task in ("a", "b", "c"):
        assert passed.at_head(task) is True
    assert passed.at_head("a") is True  # forgotten: at most ``remembered`` kept
    assert passed.at_head("c") is False
