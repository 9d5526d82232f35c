"""A worker's start-up checks (workers.preflight): a machine that cannot play refuses to start."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.domain.match_values import Limits
from workers import preflight
from workers.preflight import PreflightFailed, check_sandbox
from workers.sandbox.base import EntryHost, HostError, HostFactory, RunOutcome


class _BrokenHosts(HostFactory):
    """A narrow stand-in for a machine whose sandbox cannot start (the real ones are used
    in the integration tests; this one only has to fail)."""

    name = "bwrap"

    def __init__(self, build_ok: bool) -> None:
        self.build_ok = build_ok

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        raise HostError("bubblewrap could not start the sandbox: setting up uid map: Permission denied")

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        if self.build_ok:
            return RunOutcome(b"", b"", 0, None, 1.0, 1.0, 0)
        return RunOutcome(b"", b"cc: not found\n", 127, None, 1.0, 1.0, 0)


@pytest.mark.parametrize(
    ("build_ok", "expected"),
    [(False, "cannot build a C entry: exit 127 cc: not found"), (True, "cannot run a move: bubblewrap")],
)
def test_a_broken_sandbox_is_reported_in_one_line(
    monkeypatch: pytest.MonkeyPatch, build_ok: bool, expected: str
) -> None:
    monkeypatch.setattr(preflight, "host_factory", lambda kind: _BrokenHosts(build_ok))
    with pytest.raises(PreflightFailed) as caught:
        check_sandbox("bwrap")
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_the_real_sandbox_passes() -> None:
    from tests.integration.conftest import bwrap_problem

    if bwrap_problem() is not None:
        pytest.skip("bwrap unavailable here")
    check_sandbox("bwrap")
    check_sandbox("none")
    assert preflight.BROKER_CHECK_TIMEOUT_S <= 10


def test_a_python_that_cannot_unpack_an_artifact_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian 12's 3.11.2 before the fallback: ``extractall(filter=...)`` raised a TypeError and
    every match failed, while the preflight, which built its entry from files it wrote itself,
    passed. Now the preflight unpacks an artifact, as a match does, and says why it cannot."""
    import tarfile

    def refuses(self: tarfile.TarFile, *args: object, **kwargs: object) -> None:
        raise TypeError("TarFile.extractall() got an unexpected keyword argument 'filter'")

    monkeypatch.setattr(tarfile.TarFile, "extractall", refuses)
    with pytest.raises(PreflightFailed) as caught:
        check_sandbox("none")
    message = str(caught.value)
    assert "cannot unpack an entry's artifact with this Python" in message and "'filter'" in message, message
    assert "\n" not in message


def test_a_python_without_extraction_filters_unpacks_and_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """3.11.2 as it is (no ``tarfile.data_filter``): the fallback unpacks, the preflight passes."""
    import tarfile

    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    check_sandbox("none")
