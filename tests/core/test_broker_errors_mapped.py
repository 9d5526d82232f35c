"""The Redis client's errors have one mapper (``workers.broker_wire.wire_error``; issue 27
item 4): every other module of ``runner`` and ``workers`` sends its broker commands inside
``wire_errors()`` and catches the project's ``BrokerWireError`` family, so none of them names
the client's exceptions. Read from the source, so a new ``except redis.exceptions...`` fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: the modules that may name the client's errors, and why
ALLOWED = {
    # the mapper itself
    "workers/broker_wire.py",
    # the embedded server's process, not the run's broker commands: its start waits out the
    # client's "not up yet" errors, and its SHUTDOWN takes the connection closing as the answer
    "runner/orchestration/redis_server.py",
}

#: the client's exception names that are not generic words (``ConnectionError`` and
#: ``TimeoutError`` are Python's own too, so they count only spelled through ``redis``)
CLIENT_ERRORS = {"RedisError", "ResponseError", "AuthenticationError", "InvalidResponse", "BusyLoadingError"}


def _imports_them(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.startswith("redis.exceptions") for a in node.names)
    if isinstance(node, ast.ImportFrom) and node.module is not None and node.module.startswith("redis"):
        return node.module.startswith("redis.exceptions") or any(
            a.name == "exceptions" or a.name in CLIENT_ERRORS for a in node.names
        )
    return False


def _spells_them(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        through_redis = (
            node.attr == "exceptions" and isinstance(node.value, ast.Name) and node.value.id == "redis"
        )
        return through_redis or node.attr in CLIENT_ERRORS
    return isinstance(node, ast.Name) and node.id in CLIENT_ERRORS


def names_client_errors(source: str) -> list[int]:
    """The lines of ``source`` that name the Redis client's exceptions."""
    if "redis" not in source:
        return []  # naming them takes importing the client: parsing every module is slow
    return sorted(
        {
            node.lineno
            for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.Import, ast.ImportFrom, ast.Attribute, ast.Name))
            and (_imports_them(node) or _spells_them(node))
        }
    )


@pytest.mark.parametrize(
    "source",
    [
        "import redis\ntry:\n    pass\nexcept redis.exceptions.RedisError:\n    pass\n",
        "from redis.exceptions import ConnectionError\n",
        "from redis import exceptions\n",
        "from redis import RedisError\n",
        "import redis.exceptions as rx\n",
        "import redis\nE = redis.ResponseError\n",
    ],
)
def test_the_check_sees_each_way_of_naming_them(source: str) -> None:
    assert names_client_errors(source) != []


def test_the_check_lets_the_client_and_the_projects_errors_be() -> None:
    source = (
        "import redis\nfrom runner.errors import BrokerWireError\n"
        "r = redis.Redis.from_url('redis://x')\np: redis.client.Pipeline\n"
        "try:\n    pass\nexcept (BrokerWireError, ConnectionError, TimeoutError):\n    pass\n"
    )
    assert names_client_errors(source) == []


def test_no_module_but_the_mapper_names_the_clients_errors() -> None:
    found = {}
    for package in ("runner", "workers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            lines = names_client_errors(path.read_text(encoding="utf-8"))
            if lines and name not in ALLOWED:
                found[name] = lines
    assert found == {}, (
        "send these commands inside workers.broker_wire.wire_errors() and catch BrokerWireError"
    )


def test_the_allowed_modules_still_need_it_so_the_list_only_shrinks() -> None:
    unneeded = [
        name for name in sorted(ALLOWED) if not names_client_errors((ROOT / name).read_text(encoding="utf-8"))
    ]
    assert unneeded == [], "no longer names the client's errors: take these off ALLOWED"
