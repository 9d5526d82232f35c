"""``tourney worker`` starts Celery's worker without Celery's command line (whose imports
cost every local worker about 0.2 s of CPU at start); it must build the very worker
that ``celery worker`` with the same flags builds."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from workers import worker_cli
from workers.celery_app import app as the_app
from workers.celery_app import queue_for


class _Recorder:
    """Stands in for ``app.Worker``: records the keywords it is built with."""

    built: list[dict[str, Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.built.append(kwargs)
        self.exitcode = 0

    def start(self) -> None:
        pass


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Iterator[Celery]:
    """The project's app with ``Worker`` recorded (its settings are what the keywords read)."""
    monkeypatch.setattr(the_app, "Worker", _Recorder)  # a cached property: the instance's value wins
    _Recorder.built = []
    yield the_app


def test_the_worker_gets_the_keywords_celerys_own_command_gives_it(app: Celery) -> None:
    """``celery --quiet worker ...``: the same worker, without the banner."""
    name = "local-1-123@host"
    queue = queue_for("0123456789abcdef")
    app.worker_main(
        [
            "--quiet",  # no banner (``tourney worker`` prints its own start lines)
            "worker",
            "--pool=prefork",
            "--concurrency=3",
            f"--hostname={name}",
            f"--queues={queue}",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
    )
    worker_cli._run_celery_worker(app, name, 3, [queue])
    by_command, ours = _Recorder.built
    assert ours == by_command
    assert ours["concurrency"] == 3 and ours["queues"] == [queue] and ours["hostname"] == name


def test_a_plain_worker_name_gets_celerys_node_prefix_as_on_its_command_line(app: Celery) -> None:
    app.worker_main(["--quiet", "worker", "--hostname=plain", "--pool=prefork", "--concurrency=1"])
    worker_cli._run_celery_worker(app, "plain", 1, [queue_for("0123456789abcdef")])
    assert _Recorder.built[0]["hostname"] == _Recorder.built[1]["hostname"] == "celery@plain"


def test_a_leaving_pool_process_closes_its_sandboxes_then_exits_with_its_code(tmp_path: Path) -> None:
    """Celery's ``worker_process_shutdown`` hook: sandboxes closed first, then the process
    ends at once with the exit code billiard gave it (not after billiard's 1 s sleep)."""
    marker = tmp_path / "closed"
    pid = os.fork()
    if pid == 0:  # the child plays the pool process
        try:
            import workers.sandbox.pool as pool

            pool.close_idle_sandboxes = lambda: marker.write_text("yes")  # type: ignore[assignment]
            worker_cli._pool_process_leaving(exitcode=3, pid=os.getpid())
        finally:
            os._exit(99)  # only if the hook returned or raised
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 3
    assert marker.read_text() == "yes"
