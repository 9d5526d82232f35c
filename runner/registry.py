"""Names the coordinator and the workers agree on, each defined here once.

They live on the runner side because imports run one way (workers may import
runner, never the reverse): the config checks read them, and
``workers.protocols`` / ``workers.sandbox`` register their implementations
against them (``tests/core/test_registry.py`` checks both sides match).

The other registries have their own homes: games in ``runner.games``,
planners in the stage models of ``runner.config.models`` (their functions in
``runner.stages``), rank keys in ``runner.scoring``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, get_args

#: entry protocols (``entry.yaml``'s ``protocol``) and the games each can carry, in documentation order
PROTOCOL_GAMES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "potm-arena": frozenset({"boxing"}),
        "icfp98": frozenset({"pousse"}),
        "mnk": frozenset({"mnk", "gomoku"}),
        "gomocup": frozenset({"mnk", "gomoku"}),
    }
)
PROTOCOL_NAMES: tuple[str, ...] = tuple(PROTOCOL_GAMES)

#: where entries run: the bubblewrap sandbox, or plain processes (trusted entries only)
SandboxKind = Literal["bwrap", "none"]
SANDBOX_KINDS: tuple[str, ...] = get_args(SandboxKind)
