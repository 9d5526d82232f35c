"""Pydantic's validation errors, translated into located problems a contest organiser can act on.

Each error becomes one ``file:line:col: message``: unknown keys get a did-you-mean
over the keys allowed at that place, an unknown planner lists the planners, and
an out-of-range value shows what was given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, get_args

from pydantic import BaseModel

from runner.config.bound_run import TournamentConfig
from runner.config.errors import ConfigProblem, did_you_mean, dotted
from runner.config.source_map import SourceMap
from runner.domain.names import ENTRY_NAME_PATTERN, ENTRY_NAME_RULE, NAME_PATTERN, NAME_RULE


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in get_args(annotation):
        out.extend(_models_in(arg))
    return out


def _keys_at(loc: Sequence[str | int]) -> list[str]:
    """The keys a mapping at ``loc`` may hold (for did-you-mean on unknown keys)."""
    candidates: list[type[BaseModel]] = [TournamentConfig]
    for part in loc:
        if isinstance(part, int):
            continue
        inner = [
            m2
            for m in candidates
            if part in m.model_fields
            for m2 in _models_in(m.model_fields[part].annotation)
        ]
        if inner:
            candidates = inner
            continue
        tagged = [
            m
            for m in candidates
            if "planner" in m.model_fields and part in get_args(m.model_fields["planner"].annotation)
        ]
        if tagged:
            candidates = tagged
        # otherwise a dict key (a board name): the models stay the same
    return sorted({k for m in candidates for k in m.model_fields})


def relevant_errors(errors: Sequence[Any]) -> list[Any]:
    """The schema errors worth a line. A field that takes a word or a mapping (``advance:
    all | survivors | {top: N}``) given a mapping fails both branches; the word branch's
    complaint ("{'top': 0} is not allowed; expected one of all, survivors") would come first
    and mislead, while the mapping branch's says what is wrong ("top: must be >= 1")."""

    def deeper_error_of_same_field(err: Any) -> bool:
        field = tuple(err["loc"][:-1])
        return any(
            o is not err and len(o["loc"]) > len(err["loc"]) and tuple(o["loc"][: len(field)]) == field
            for o in errors
        )

    return [
        err
        for err in errors
        if not (
            err["type"] == "literal_error"
            and isinstance(err.get("input"), dict)
            and deeper_error_of_same_field(err)
        )
    ]


def schema_problem(err: Any, smap: SourceMap) -> ConfigProblem:
    loc: list[str | int] = list(err["loc"])
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        key = str(loc[-1])
        line, col = smap.position(loc, key=True)
        where, _ = smap.resolve(loc[:-1])
        msg = f"unknown key {key!r}{did_you_mean(key, _keys_at(loc[:-1]))}"
        return ConfigProblem(smap.file, line, col, f"{dotted(where)}: {msg}")
    if kind in ("missing", "union_tag_not_found"):
        key = str(ctx.get("discriminator", loc[-1] if loc else "")).strip("'")
        where, _ = smap.resolve(loc if kind == "union_tag_not_found" else loc[:-1])
        line, col = smap.position(where, key=True)
        return ConfigProblem(smap.file, line, col, f"{dotted(where)}: missing required key {key!r}")
    where, _ = smap.resolve(loc)
    line, col = smap.position(where)
    if kind == "union_tag_invalid":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        tag = str(ctx.get("tag", ""))
        msg = f"unknown planner {tag!r}{did_you_mean(tag, expected)}; expected one of {', '.join(expected)}"
        line, col = smap.position((*where, "planner"))
        return ConfigProblem(smap.file, line, col, f"{dotted((*where, 'planner'))}: {msg}")
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        got = err.get("input")
        hint = did_you_mean(str(got), expected)
        msg = f"{got!r} is not allowed{hint}; expected one of {', '.join(expected)}"
        return ConfigProblem(smap.file, line, col, f"{dotted(where)}: {msg}")
    msg = str(err["msg"]).removeprefix("Value error, ")
    got = err.get("input")
    if kind == "string_pattern_mismatch" and ctx.get("pattern") in (NAME_PATTERN, ENTRY_NAME_PATTERN):
        rule = NAME_RULE if ctx.get("pattern") == NAME_PATTERN else ENTRY_NAME_RULE
        return ConfigProblem(
            smap.file, line, col, f"{dotted(where)}: {got!r} is not a valid name: expected {rule}"
        )
    if isinstance(got, str | int | float | bool) and kind not in ("value_error", "assertion_error"):
        msg += f" (got {got!r})"
    return ConfigProblem(smap.file, line, col, f"{dotted(where)}: {msg}")
