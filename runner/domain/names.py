"""The names a config and its entries give: entries, variants, boards, stages (docs/config.md#names).

Names are printed on the organiser's terminal, in file names and in the HTML
report, so they are plain ASCII words: no control characters (an ESC or BEL
in a name would act on the terminal), no spaces, no markup. Entry and variant
names may hold ``.`` and ``+`` (``gcc-4.2``, ``c++``); board and stage names
may not hold ``.``, because a per-round board id joins them with dots
(``runner.domain.boards``).
"""

from __future__ import annotations

import re

ENTRY_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$"
#: boards, stages and the tournament itself: an entry name without . and +
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"

_ENTRY_NAME = re.compile(ENTRY_NAME_PATTERN)
ENTRY_NAME_RULE = "1-64 of A-Z a-z 0-9 . _ + - starting with a letter or digit"
NAME_RULE = "1-64 of A-Z a-z 0-9 _ - starting with a letter or digit"


def entry_name_problem(name: str, what: str = "entry name") -> str | None:
    """Why ``name`` cannot name an entry or a variant (None if it can); the name is quoted
    with ``repr``, so a control character in it shows as an escape."""
    if _ENTRY_NAME.match(name):
        return None
    return f"{what} {name!r} is not a valid name: expected {ENTRY_NAME_RULE}"
