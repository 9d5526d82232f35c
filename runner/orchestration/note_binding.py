"""Which tasks a coordinator sent, so that a ``started`` note is believed only for one of them
(docs/fleet.md, "Notes are bound to their run and task").

An enrolled key is enough to sign a ``started`` note for any match; the note proves something
only when it names this run, the attempt the run wants now, and the digest of an envelope this
coordinator sent for it (the task or a straggler's copy: ``runner.domain.wire.task_digest``).
Anything else (a replay from another run, an old attempt, an invented task) is ``Unbound``:
dropped, nobody charged.
"""

from __future__ import annotations

import dataclasses
import json

from runner.domain.fleet import Member
from runner.domain.wire import Finished, Note, Started, task_digest
from runner.orchestration.dispatcher import InboxNote, Rejected, Unbound


class SentTasks:
    """match -> (the attempt wanted, the digests of the envelopes sent for it)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._sent: dict[str, tuple[int, set[str]]] = {}

    def sent(self, match_id: str, attempt: int, envelope: str) -> None:
        """The task of ``attempt`` went out (a new attempt replaces what was kept)."""
        self._sent[match_id] = (attempt, {task_digest(envelope)})

    def copy_sent(self, match_id: str, attempt: int, envelope: str) -> None:
        """A second copy of ``attempt`` went out (a straggler's): its notes are bound too."""
        kept = self._sent.get(match_id)
        if kept is not None and kept[0] == attempt:
            kept[1].add(task_digest(envelope))

    def forget(self, match_id: str) -> None:
        self._sent.pop(match_id, None)

    def why_unbound(self, note: Started) -> str | None:
        """Why ``note`` answers no task sent here (None: it does)."""
        if note.run != self.run_id:
            return f"names run {note.run!r}, not this one" if note.run else "names no run (an older worker?)"
        kept = self._sent.get(note.match_id)
        if kept is None or kept[0] != note.attempt:
            return f"attempt {note.attempt} is not the one this run wants"
        if note.task not in kept[1]:
            return "names no task this coordinator sent"
        return None

    def bound(self, note: InboxNote) -> InboxNote:
        """``note``, or an ``Unbound`` in its place for a ``started`` note of no task sent here
        (a verification replay's notes are checked by the verifier against its own hash)."""
        if isinstance(note, Started) and not note.verify:
            why = self.why_unbound(note)
            if why is not None:
                return Unbound(note.match_id, note.attempt, note.worker, why)
        return note


def attributed(note: Note, member: Member) -> InboxNote:
    """``note`` as from the worker whose key signed it: named ``NAME`` (the registry's name
    for that key), or ``NAME/INSTANCE`` when the worker process calls itself otherwise
    (``tourney run``'s restarted local workers share one key). The identity is the part
    before the slash (``worker_identity``): the key, never what the note says."""
    if member.revoked:
        return Rejected(
            note.match_id,
            note.attempt,
            member.name,
            f"the key of worker {member.name} is revoked ({member.reason})",
            revoked=True,
            kind=note.kind,
        )
    label = member.name if note.worker in ("", member.name) else f"{member.name}/{note.worker}"
    if isinstance(note, Finished):
        return dataclasses.replace(note, worker=label, result=dataclasses.replace(note.result, worker=label))
    return dataclasses.replace(note, worker=label)


def rejected_note(blob: bytes | str, why: str) -> Rejected:
    """A note no enrolled key signed, as the coordinator records it: what it claims (match,
    attempt, worker, kind) and the key its signature names, so the run can name that key
    (docs/fleet.md). ``why``: the signature check's refusal ("signed with another key (<id>)")."""
    claimed = json.loads(blob)  # decoded whole only to name what it claims
    sig = claimed.get("sig")
    return Rejected(
        str(claimed.get("match_id", "?")),
        int(claimed.get("attempt", 0) or 0),
        str(claimed.get("worker", "?")),
        why,
        kind=str(claimed.get("kind", "")),
        key_id=str(sig.get("key", ""))[:16] if isinstance(sig, dict) else "",
    )
