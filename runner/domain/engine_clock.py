"""How a chess engine is asked to think: time controls, the clock a worker keeps, options.

Pure values and rules (docs/engines.md has the user's side):

* ``TimeControl`` is cutechess's and fastchess's ``tc``: ``40/60`` (40 moves in 60 s,
  repeating), ``10+0.1`` (10 s, 0.1 s a move), ``40/1:30+0.5``, ``60``.
* ``EngineSettings`` is one entry's way of thinking: ``tc`` and/or ``st`` (seconds per
  move), ``nodes``, ``depth``, ``timemargin`` (ms an engine may overstep its clock before
  its flag falls), engine ``options`` and ``restart`` (a fresh engine process for every game,
  or one kept across the games of a match: docs/engines.md). It travels with the entry
  (``EntryRef.engine``).
* ``Clock`` is one side's clock in one game: the worker spends on it the wall time it
  measured for each move; a move that leaves it below ``-timemargin`` is a flag fall.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

#: the clock of an engine whose entry and config name none (``tourney play`` too): docs/engines.md
DEFAULT_TC = "10+0.1"
#: fastchess's ``tc=inf``: no clock (``nodes`` or ``depth`` bound the search instead)
INFINITE_TC = "inf"
#: ms an engine may overstep its clock by default: the sandbox's pipes and the worker's
#: own reading sit inside the measured time, which an engine's own clock does not see
DEFAULT_TIMEMARGIN_MS = 50

#: an engine on ``nodes`` or ``depth`` alone has no clock: its move's wall bound
#: (``EngineSettings.untimed_wall_s``) is 10 s plus its nodes at 20,000 a second (a slow
#: engine in a loaded sandbox; stockfish searches about a million), or 60 s for a depth
UNTIMED_BASE_S, UNTIMED_NPS, UNTIMED_DEPTH_S = 10.0, 20_000, 60.0

OptionValue = str | int | float | bool

_TC = re.compile(
    r"(?:(?P<moves>\d+)/)?(?P<base>\d+(?:\.\d*)?|\d+:\d{1,2}(?:\.\d*)?)(?:\+(?P<inc>\d+(?:\.\d*)?))?"
)


@dataclass(frozen=True)
class TimeControl:
    """``moves`` per period (None: the whole game), ``base_s`` per period, ``inc_s`` per move."""

    moves: int | None
    base_s: float
    inc_s: float = 0.0

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """``40/60``, ``10+0.1``, ``40/1:30+0.5``; ``ValueError`` says what a tc looks like."""
        m = _TC.fullmatch(text.strip())
        if m is None:
            raise ValueError(f"tc {text!r} is not MOVES/SECONDS, SECONDS+INCREMENT or MOVES/MIN:SEC+INC")
        base = m["base"]
        if ":" in base:
            minutes, seconds = base.split(":")
            if float(seconds) >= 60:
                raise ValueError(f"tc {text!r}: MIN:SEC takes seconds below 60")
            base_s = int(minutes) * 60 + float(seconds)
        else:
            base_s = float(base)
        moves = int(m["moves"]) if m["moves"] else None
        if moves == 0 or base_s <= 0:
            raise ValueError(f"tc {text!r}: a period needs moves > 0 and time > 0")
        return cls(moves, base_s, float(m["inc"] or 0))

    def text(self) -> str:
        """The form ``parse`` reads (and PGN's TimeControl, ``moves/seconds+inc``)."""
        out = f"{self.base_s:g}" + (f"+{self.inc_s:g}" if self.inc_s else "")
        return f"{self.moves}/{out}" if self.moves else out


@dataclass(frozen=True)
class EngineSettings:
    """One entry's way of thinking (module doc). With neither ``tc``, ``st``, ``nodes`` nor
    ``depth`` the engine plays at ``DEFAULT_TC``."""

    tc: TimeControl | None = None
    st_s: float | None = None
    nodes: int | None = None
    depth: int | None = None
    timemargin_ms: int = DEFAULT_TIMEMARGIN_MS
    options: dict[str, OptionValue] = field(default_factory=dict)
    #: a fresh process for every game (fastchess ``restart=on``); off, the default as in
    #: fastchess, keeps the engine alive across the games of its own match (docs/engines.md)
    restart: bool = False
    #: the nodes per second the clocks are meant for (fishtest's and OpenBench's scaling): a
    #: worker multiplies ``tc`` and ``st`` by scale_nps / the engine's speed it measured
    #: (``scaled``; docs/engines.md, "Clocks scaled to the machine")
    scale_nps: int | None = None
    #: every line to and from the engine kept, with timestamps, per game (``log: engine``)
    log: bool = False
    #: ``tc: inf`` (fastchess ``tc=inf``): no clock at all, for ``nodes`` or ``depth`` alone
    #: where an entry.yaml or ``each:`` names a clock (a later ``tc`` replaces it again)
    no_clock: bool = False

    def __post_init__(self) -> None:
        nothing = self.tc is None and self.st_s is None and self.nodes is None and self.depth is None
        if nothing and not self.no_clock:
            object.__setattr__(self, "tc", TimeControl.parse(DEFAULT_TC))

    @property
    def timed(self) -> bool:
        """Whether the engine plays on a clock (``tc``) or a time per move (``st``)."""
        return self.tc is not None or self.st_s is not None

    def describe(self) -> str:
        """One line, the way the PGN's TimeControl and a verdict show it: ``10+0.1``, ``st=0.1``."""
        parts = []
        if self.tc is not None:
            parts.append(self.tc.text())
        if self.st_s is not None:
            parts.append(f"st={self.st_s:g}")
        if self.nodes is not None:
            parts.append(f"nodes={self.nodes}")
        if self.depth is not None:
            parts.append(f"depth={self.depth}")
        return " ".join(parts)

    def untimed_wall_s(self, move_wall_s: float) -> float:
        """How long a move on ``nodes`` or ``depth`` alone may take before it is a ``timeout``:
        no clock says, so the bound comes from the limit (docs/engines.md, "Clocks"): 10 s
        plus the nodes at UNTIMED_NPS; 60 s for a depth; never less than ``move_wall_s``
        (``limits.move_wall_s``, ``tourney play --move-time``), which raises it."""
        bound = 0.0
        if self.nodes is not None:
            bound = max(bound, UNTIMED_BASE_S + self.nodes / UNTIMED_NPS)
        if self.depth is not None:
            bound = max(bound, UNTIMED_DEPTH_S)
        return max(bound, move_wall_s)

    def refusal(self, protocol: str) -> str | None:
        """Why ``protocol`` cannot carry these settings as asked, in one line; None when it can.
        Only what is known before the engine starts (what it announces is checked at its
        handshake: ``workers.protocols``)."""
        if self.no_clock and self.st_s is None and self.nodes is None and self.depth is None:
            return f"tc={INFINITE_TC} needs nodes or depth: with no limit at all an engine never answers"
        if protocol == "xboard" and self.st_s is not None and (self.st_s < 1 or self.st_s != int(self.st_s)):
            return (
                f"st={self.st_s:g}: xboard's st is whole seconds, so an xboard engine cannot be "
                "given it (use a whole number of seconds, or a tc)"
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"timemargin_ms": self.timemargin_ms}
        if self.tc is not None:
            d["tc"] = self.tc.text()
        elif self.no_clock:
            d["tc"] = INFINITE_TC
        for key in ("st_s", "nodes", "depth"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.options:
            d["options"] = dict(self.options)
        if self.restart:  # absent when off: the specs of configs that never name it read as before
            d["restart"] = True
        if self.scale_nps is not None:
            d["scale_nps"] = self.scale_nps
        if self.log:
            d["log"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EngineSettings:
        tc = d.get("tc")
        return cls(
            tc=TimeControl.parse(tc) if tc and tc != INFINITE_TC else None,
            no_clock=tc == INFINITE_TC,
            st_s=d.get("st_s"),
            nodes=d.get("nodes"),
            depth=d.get("depth"),
            timemargin_ms=int(d.get("timemargin_ms", DEFAULT_TIMEMARGIN_MS)),
            options=dict(d.get("options") or {}),
            restart=bool(d.get("restart", False)),
            scale_nps=d.get("scale_nps"),
            log=bool(d.get("log", False)),
        )

    def scaled(self, factor: float) -> EngineSettings:
        """These settings with the clocks (``tc``'s base and increment, ``st``) multiplied by
        ``factor``; nodes and depth are no clock and stay as they are."""
        tc = self.tc
        if tc is not None:
            tc = TimeControl(tc.moves, round(tc.base_s * factor, 4), round(tc.inc_s * factor, 5))
        st_s = round(self.st_s * factor, 5) if self.st_s is not None else None
        return replace(self, tc=tc, st_s=st_s)


def merged(base: dict[str, Any], *overrides: dict[str, Any]) -> dict[str, Any]:
    """Settings dicts (``to_dict`` form, config keys already mapped) laid over each other:
    later ones win key by key, and ``options`` merge name by name (an entry's own options,
    then the config's ``each``, then the entry's line in the config)."""
    out = {k: v for k, v in base.items() if k != "options"}
    options = dict(base.get("options") or {})
    for o in overrides:
        out.update({k: v for k, v in o.items() if k != "options" and v is not None})
        options.update(o.get("options") or {})
    if options:
        out["options"] = options
    return out


@dataclass(frozen=True)
class Clock:
    """One side's clock in one game, in ms. ``left_ms`` may go below zero by up to the margin."""

    settings: EngineSettings
    left_ms: float
    moves_made: int = 0

    @classmethod
    def start(cls, settings: EngineSettings) -> Clock:
        tc = settings.tc
        return cls(settings, tc.base_s * 1000.0 if tc is not None else 0.0)

    @property
    def moves_to_go(self) -> int | None:
        """Moves until the next period's time is added (``movestogo``); None without periods."""
        tc = self.settings.tc
        if tc is None or tc.moves is None:
            return None
        return tc.moves - self.moves_made % tc.moves

    def allowance_ms(self) -> float:
        """How long the next move may take before the flag falls (margin included)."""
        s = self.settings
        limits = []
        if s.tc is not None:
            limits.append(self.left_ms)
        if s.st_s is not None:
            limits.append(s.st_s * 1000.0)
        return max(0.0, min(limits)) + s.timemargin_ms

    def spend(self, used_ms: float) -> tuple[Clock, bool]:
        """The clock after a move that took ``used_ms``, and whether its flag fell."""
        s = self.settings
        flagged = used_ms > self.allowance_ms() if s.timed else False
        if s.tc is None:
            # the constructor, not dataclasses.replace: this runs three times a ply
            return Clock(s, self.left_ms, self.moves_made + 1), flagged
        left = self.left_ms - used_ms + s.tc.inc_s * 1000.0
        made = self.moves_made + 1
        if s.tc.moves is not None and made % s.tc.moves == 0:
            left += s.tc.base_s * 1000.0
        return Clock(s, left, made), flagged

    def describe(self) -> str:
        """``'9.873 s left of 10+0.1'`` (a flag fall's verdict detail)."""
        if self.settings.tc is None:
            return self.settings.describe()
        return f"{self.left_ms / 1000.0:.3f} s left of {self.settings.tc.text()}"
