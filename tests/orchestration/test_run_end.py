"""The end of ``tourney run``: the cluster stops while the report is written."""

from __future__ import annotations

import threading

import pytest

from runner.orchestration.cluster import LocalCluster


class _Cluster(LocalCluster):
    # only its stop is played here: nothing is started, so LocalCluster's own fields are not needed
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.stopped_in: list[str] = []
        self.release = threading.Event()

    def stop(self) -> None:
        self.stopped_in.append(threading.current_thread().name)
        self.release.wait(5.0)
        if self.fail:
            raise OSError("redis-server would not stop")


def test_the_cluster_stops_in_another_thread_and_the_block_waits_for_it() -> None:
    cluster = _Cluster()
    with cluster.stopping_meanwhile():
        # the block runs while the stop is still going on (it waits for this release)
        cluster.release.set()
    assert len(cluster.stopped_in) == 1
    assert cluster.stopped_in[0] != threading.current_thread().name


def test_what_the_stop_raised_is_raised_after_the_block() -> None:
    cluster = _Cluster(fail=True)
    cluster.release.set()
    ran = []
    with pytest.raises(OSError, match="would not stop"), cluster.stopping_meanwhile():
        ran.append(True)
    assert ran == [True]
