"""The speed tricks' switches (issue 27, item 4): each read in one place, each turning off
its own trick only, every trick on unless switched off."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from runner.orchestration import standby
from runner.orchestration import warm as coordinator_warm
from workers import warm as worker_warm
from workers.sandbox.pool import reuse_enabled

ROOT = Path(__file__).resolve().parents[2]

COORDINATOR_SWITCHES = {
    coordinator_warm.STANDBY_ENV: "standby",
    coordinator_warm.REPLAY_WARMER_ENV: "replay_warmer",
}
WORKER_SWITCHES = {
    worker_warm.HAND_TASK_MESSAGE_ENV: "hand_task_message",
    worker_warm.PRELOAD_ENV: "preload",
    worker_warm.SANDBOX_REUSE_ENV: "sandbox_reuse",
    worker_warm.BEGIN_SCRIPT_ENV: "begin_script",
}


def test_every_trick_is_on_unless_switched_off() -> None:
    assert all(dataclasses.asdict(coordinator_warm.WarmSwitches.from_env({})).values())
    assert all(dataclasses.asdict(worker_warm.WorkerSwitches.from_env({})).values())


@pytest.mark.parametrize("value", ["0", "off", "No", "false"])
def test_each_variable_turns_off_its_own_trick_alone(value: str) -> None:
    for switches, table in (
        (coordinator_warm.WarmSwitches, COORDINATOR_SWITCHES),
        (worker_warm.WorkerSwitches, WORKER_SWITCHES),
    ):
        for name, field in table.items():
            got = dataclasses.asdict(switches.from_env({name: value}))
            assert [k for k, on in got.items() if not on] == [field], (name, got)


def test_the_standbys_old_switch_still_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not coordinator_warm.WarmSwitches.from_env({coordinator_warm.NO_STANDBY_ENV: "1"}).standby
    assert coordinator_warm.WarmSwitches.from_env({coordinator_warm.NO_STANDBY_ENV: "0"}).standby
    # what the run's start asks (runner.cli): no standby worker when switched off
    assert standby.wanted(["run", "c.yaml"])
    monkeypatch.setenv(coordinator_warm.STANDBY_ENV, "0")
    assert not standby.wanted(["run", "c.yaml"])


def test_sandbox_reuse_follows_its_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    assert reuse_enabled()
    monkeypatch.setenv(worker_warm.SANDBOX_REUSE_ENV, "0")
    assert not reuse_enabled()


def test_each_switch_is_read_in_its_warm_module_only() -> None:
    """No other module of runner/ or workers/ names a switch's variable (its docstrings may)."""
    names = {*COORDINATOR_SWITCHES, *WORKER_SWITCHES, coordinator_warm.NO_STANDBY_ENV}
    homes = {ROOT / "runner/orchestration/warm.py", ROOT / "workers/warm.py"}
    offenders = []
    for path in [*(ROOT / "runner").rglob("*.py"), *(ROOT / "workers").rglob("*.py")]:
        if path in homes:
            continue
        code = re.sub(r'"""[\s\S]*?"""', "", path.read_text())  # docstrings name them for readers
        code = "\n".join(line.split("#", 1)[0] for line in code.splitlines())
        offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if f'"{n}"' in code]
    assert offenders == []
