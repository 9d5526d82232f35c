"""What a config problem is, and the wording every config message shares.

A problem is located (``file:line:col: message``); ``ConfigError`` carries
every problem found, so ``tourney validate`` reports them all at once.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from runner.errors import UsageError

#: a path into the YAML document: mapping keys and list indexes
Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class ConfigProblem:
    file: str
    line: int  # 1-based
    col: int  # 1-based
    message: str
    warning: bool = False  # a warning does not stop the config; `validate` prints it and exits 0

    def __str__(self) -> str:
        tag = "warning: " if self.warning else ""
        return f"{self.file}:{self.line}:{self.col}: {tag}{self.message}"


class ConfigError(UsageError, ValueError):
    """A config that cannot be used; ``problems`` lists every reason with its location."""

    prefixed = False  # each line is ``file:line:col: message`` already

    def __init__(self, problems: Sequence[ConfigProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def dotted(loc: Sequence[str | int]) -> str:
    """``stages[0].boards[1]``: a document path as messages name it."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def entry_names(names: Sequence[str], most: int = 3) -> str:
    """'entry 'a'' or 'entries 'a', 'b', 'c' and 4 more'."""
    shown = ", ".join(repr(n) for n in names[:most])
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return f"entry {shown}" if len(names) == 1 else f"entries {shown}{more}"


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or nothing."""
    by_lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""
