"""Entry text made inert for a terminal (docs/sandbox.md: details are one line).

Verdict details, stderr tails and build logs are written by untrusted
programs. Printed raw, ``ESC]0;...BEL`` retitles the organiser's terminal and
``ESC[2J`` clears it; a carriage return or a bidi override can make one line
read as another. ``inert`` shows every such character as a visible escape
(``\\x1b``, ``\\u202e``) and leaves ordinary text, tabs and (unless
``one_line``) newlines alone. HTML needs no help: the report's templates are
jinja2-autoescaped.
"""

from __future__ import annotations

import re
import unicodedata

#: characters a terminal acts on although their category is not "C": line and
#: paragraph separators
_ACTIVE = frozenset({"\u2028", "\u2029"})


def _visible(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


#: text that is all printable ASCII (and tabs, and newlines where kept) has nothing to escape:
#: the usual case, found without looking at each character in Python (a report's listing
#: passes thousands of details through here)
_PLAIN = re.compile(r"[\t\n\x20-\x7e]*+\Z")
_PLAIN_ONE_LINE = re.compile(r"[\t\x20-\x7e]*+\Z")


def inert(text: str, *, one_line: bool = False) -> str:
    """``text`` with control and format characters escaped (newlines too if ``one_line``)."""
    if (_PLAIN_ONE_LINE if one_line else _PLAIN).match(text):
        return text
    return escape_each(text, one_line=one_line)


def escape_each(text: str, *, one_line: bool) -> str:
    """``inert``, character by character (what its fast path must agree with)."""
    out = []
    for ch in text:
        if ch == "\t" or (ch == "\n" and not one_line) or ch == "\\":
            out.append(ch)
        elif ch in _ACTIVE or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(_visible(ch))
        else:
            out.append(ch)
    return "".join(out)
