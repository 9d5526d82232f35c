"""Replaying a disputed match (``tourney rerun``, docs/disputes.md): what is played, what is refused.

The replay is exactly the stored ``MatchSpec``: same board, seat orders, RNG
seed and entry digests, played in this process from the run's own packed
artifacts. The run directory is enough: the match's record and the run's
``resolved.json`` say what to play, ``artifacts/`` holds the code. Before
playing, the directory of each of the match's entries (where it was when the
run started) is hashed again; if one changed, the rerun is refused (exit 2)
unless ``--allow-changed-code`` says to play the current code instead (the new
digests are then recorded in the new result). A directory that is gone (the
entries tree moved) is no reason to refuse: the packed artifact is the code
the match was played with.

The new result is kept beside the old one as a numbered *candidate* of the
match (``runner.storage.disputes``); old and new are printed side by side,
with the first move where they differ and what can explain it
(``runner.domain.disputes.explain_difference``). Nothing becomes official:
``tourney accept RUN MATCH N`` makes exactly candidate N official, replans
and lists what changed (``runner.orchestration.disputes``); ``tourney run``
on the same config then plays the new matches. The rerun itself never
dispatches anything else.
"""

from __future__ import annotations

from collections.abc import Callable

from runner.config import TournamentConfig
from runner.domain.entries import directory_digest
from runner.domain.match_values import EntryRef, MatchResult, MatchSpec
from runner.domain.wire import Finished
from runner.errors import UsageError
from runner.orchestration.inline_dispatcher import InlineDispatcher
from runner.storage.run_dir import RunDir


class RerunRefused(UsageError, RuntimeError):
    """The match cannot be replayed as asked (no result yet, its entries' code changed)."""


def changed_entries(
    recorded: TournamentConfig, spec: MatchSpec, live: Callable[[], TournamentConfig]
) -> tuple[dict[str, tuple[str, EntryRef]], list[str]]:
    """Entries whose directory no longer has the digest the match was played with:
    name -> (old digest, new ref); and the entries whose directory is gone (moved or
    deleted: the replay uses their packed artifact). Only this match's entries are
    hashed; the live config (``live``) is loaded only when some entry changed, for
    the new code's refs."""
    changed: list[str] = []
    gone: list[str] = []
    for name, ref in spec.entries.items():
        path = recorded.resolve_player(name).path
        if not path.is_dir():
            gone.append(name)
        elif directory_digest(path, recorded.limits.entry_caps()) != ref.digest:
            changed.append(name)
    if not changed:
        return {}, gone
    now = live()
    return {n: (spec.entries[n].digest, now.resolve_player(n).ref()) for n in changed}, gone


def play_again(spec: MatchSpec, rd: RunDir, worker: str = "rerun") -> MatchResult:
    """Play the stored spec once more, in this process, through the inline dispatcher."""
    dispatcher = InlineDispatcher(rd.artifacts, rd.workers / "rerun" / "artifacts", worker=worker)
    dispatcher.submit(spec, 0)
    for note in dispatcher.poll(0):
        if isinstance(note, Finished):
            return note.result
    raise RuntimeError("the inline replay returned no result")
