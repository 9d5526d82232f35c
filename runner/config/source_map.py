"""YAML with positions: the document's data and where each of its nodes is written.

PyYAML's safe loader gives the data; walking its node tree gives the line and
column of every key and value, so a problem found later (by the schema or a
cross-check) can point at the text that caused it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from runner.config.errors import ConfigProblem, Loc, dotted


class SourceMap:
    """Line/column (1-based) of every node of a YAML document, keyed by its path."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.values: dict[Loc, tuple[int, int]] = {(): (1, 1)}
        self.keys: dict[Loc, tuple[int, int]] = {}

    def resolve(self, loc: Sequence[str | int]) -> tuple[Loc, list[str | int]]:
        """The deepest path of ``loc`` present in the document and the parts that were not.

        Parts missing from the document are skipped rather than ending the walk,
        because pydantic inserts the tag of a discriminated union into ``loc``.
        """
        path: Loc = ()
        missing: list[str | int] = []
        for part in loc:
            if (*path, part) in self.values:
                path = (*path, part)
            else:
                missing.append(part)
        return path, missing

    def position(self, loc: Sequence[str | int], *, key: bool = False) -> tuple[int, int]:
        path, _ = self.resolve(loc)
        if key and path in self.keys:
            return self.keys[path]
        return self.values.get(path, (1, 1))

    def problem(self, loc: Sequence[str | int], message: str, *, key: bool = False) -> ConfigProblem:
        """``message`` about the node at ``loc`` (its key with ``key=True``), located and prefixed
        with the part of ``loc`` the document holds."""
        line, col = self.position(loc, key=key)
        where, _ = self.resolve(loc)
        return ConfigProblem(self.file, line, col, f"{dotted(where)}: {message}")


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def parse_yaml(text: str, file: str) -> tuple[Any, SourceMap, list[ConfigProblem]]:
    """The document's data, its source map, and problems (syntax errors, duplicate keys)."""
    smap = SourceMap(file)
    problems: list[ConfigProblem] = []
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problems.append(ConfigProblem(file, line, col, f"not valid YAML: {e.problem or e}"))
        return None, smap, problems
    except yaml.YAMLError as e:
        problems.append(ConfigProblem(file, 1, 1, f"not valid YAML: {e}"))
        return None, smap, problems
    finally:
        loader.dispose()
    if node is not None:
        smap.values[()] = _mark(node)
        _walk(node, (), smap, problems)
    return data, smap, problems


def _walk(node: yaml.Node, path: Loc, smap: SourceMap, problems: list[ConfigProblem]) -> None:
    if isinstance(node, yaml.MappingNode):
        first: dict[str, tuple[int, int]] = {}
        for knode, vnode in node.value:
            key = knode.value if isinstance(knode, yaml.ScalarNode) else str(knode.value)
            if key in first:
                line, col = _mark(knode)
                problems.append(
                    ConfigProblem(
                        smap.file,
                        line,
                        col,
                        f"{dotted((*path, key))}: duplicate key (first at line {first[key][0]})",
                    )
                )
            first[key] = _mark(knode)
            child = (*path, key)
            smap.keys[child] = _mark(knode)
            smap.values[child] = _mark(vnode)
            _walk(vnode, child, smap, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, vnode in enumerate(node.value):
            child = (*path, i)
            smap.values[child] = _mark(vnode)
            _walk(vnode, child, smap, problems)
