"""``Dispatcher`` is the whole interface the coordinator uses (issue 27, item 1): the coordinator
never asks which kind of dispatcher it has, and everything it calls on one is on the protocol,
which both kinds implement in full (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

from bench.instant import InstantDispatcher
from runner.orchestration.celery_dispatcher import CeleryDispatcher
from runner.orchestration.dispatcher import Dispatcher
from runner.orchestration.inline_dispatcher import InlineDispatcher

ROOT = Path(__file__).resolve().parents[2]
#: the coordinator's parts and what it drives with its dispatcher (the verification replays)
ORCHESTRATION = ROOT / "runner" / "orchestration"
COORDINATOR_MODULES = [*sorted(ORCHESTRATION.glob("coordinator*.py")), ORCHESTRATION / "verification.py"]
DISPATCHER_KINDS = ("InlineDispatcher", "CeleryDispatcher", "inline_dispatcher", "celery_dispatcher")


def protocol_members() -> set[str]:
    return {name for name in vars(Dispatcher) if not name.startswith("_")}


def dispatcher_uses(tree: ast.AST) -> set[str]:
    """Every ``X`` of ``self.dispatcher.X`` in ``tree``."""
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "dispatcher"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "self"
    }


def kind_checks(tree: ast.AST) -> list[int]:
    """Lines of an ``isinstance``/``type`` check on a dispatcher, or naming a kind of one."""
    rows = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "type")
        ):
            named = ast.unparse(node.args[0]) if node.args else ""
            kind = "dispatcher" in named
        else:
            named = {ast.Name: "id", ast.alias: "name", ast.ImportFrom: "module"}.get(type(node), "")
            kind = bool(named) and any(k in str(getattr(node, named) or "") for k in DISPATCHER_KINDS)
        if kind:
            rows.append(getattr(node, "lineno", 0))
    return rows


def test_the_walk_finds_the_coordinator_and_its_calls() -> None:
    assert {p.name for p in COORDINATOR_MODULES} >= {"coordinator.py", "coordinator_inbox.py"}
    used = set().union(*(dispatcher_uses(ast.parse(p.read_text())) for p in COORDINATOR_MODULES))
    assert {"submit", "poll", "submit_copy", "quarantine"} <= used


def test_the_coordinator_never_asks_which_dispatcher_it_has() -> None:
    found = {p.name: kind_checks(ast.parse(p.read_text())) for p in COORDINATOR_MODULES}
    assert {name: rows for name, rows in found.items() if rows} == {}


def test_everything_the_coordinator_calls_on_its_dispatcher_is_on_the_protocol() -> None:
    for path in COORDINATOR_MODULES:
        beyond = dispatcher_uses(ast.parse(path.read_text())) - protocol_members()
        assert beyond == set(), f"{path.name} uses {sorted(beyond)} beyond the Dispatcher protocol"


def test_every_dispatcher_implements_the_whole_protocol() -> None:
    members = protocol_members()
    assert {"observe", "submit", "poll", "close", "patience_s"} <= members
    for kind in (InlineDispatcher, CeleryDispatcher, InstantDispatcher):
        missing = sorted(m for m in members if not hasattr(kind, m))
        assert missing == [], f"{kind.__name__} lacks {missing}"
