"""What travels between coordinator and workers, and the one codec that writes and reads it.

The codec (``encode``/``decode``) is msgspec's JSON over the dataclasses themselves: it walks
their fields and annotations, so no value has a hand-written ``to_dict``/``from_dict``, and
adding a field to a match is a change to ``runner.domain.match_values`` alone. msgspec
rather than pydantic's ``TypeAdapter`` (already a dependency): both read plain dataclasses,
and msgspec encodes and decodes a spec or a result about 1.6 times as fast (docs/benchmarks.md,
"codec"), which counts on the coordinator for every match. Keys are written sorted, so one
value has one encoding.

The messages: the coordinator sends a ``TaskEnvelope`` (as a Celery task's argument); a
worker answers through the run's inbox with ``Started``, ``Finished`` and ``Skipped``
notes, and shows what it is doing in a ``LiveMatch`` record; the organiser stops a worker's
key with a ``QuarantineNotice``. Each is signed over the bytes ``encode`` wrote:
``runner.domain.signing``'s ``signed`` and ``open_message`` are the one way to make and read
them (kept there, so that reading a value costs no cryptography import).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import msgspec

from runner.domain.match_values import MatchResult, MatchSpec
from runner.errors import MessageRejected

#: the task envelope's version: a worker refuses an envelope of another version. 2: signed
#: over the codec's bytes, which travel as a string (version 1 travelled as a JSON object)
ENVELOPE_VERSION = 2

T = TypeVar("T")


class WireError(MessageRejected, ValueError):
    """A message that is not one of ours: malformed, unknown kind or version."""


_encoder = msgspec.json.Encoder(order="sorted")
_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def encode(value: object) -> bytes:
    """``value``'s JSON: keys sorted, no spaces, UTF-8. The one encoding of a value."""
    return _encoder.encode(value)


def decode(raw: bytes | str, kind: type[T]) -> T:
    """The ``kind`` that ``raw`` encodes; ``WireError`` if it is not one. Members ``kind``
    does not know (a signature, a field a newer sender added) are skipped."""
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.json.Decoder(kind)
    try:
        value: T = decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise WireError(f"not a {kind.__name__}: {e}") from None
    return value


def to_builtins(value: object) -> Any:
    """``value`` as JSON's types (dicts, lists, str, numbers): what ``encode`` writes, read back
    (``msgspec.to_builtins`` would keep tuples, which JSON has not)."""
    return msgspec.json.decode(_encoder.encode(value))


def from_builtins(data: object, kind: type[T]) -> T:
    """``decode`` for data already parsed (a stored row someone patched as a dict)."""
    try:
        value: T = msgspec.convert(data, kind)
    except msgspec.ValidationError as e:
        raise WireError(f"not a {kind.__name__}: {e}") from None
    return value


@dataclass(frozen=True)
class TaskEnvelope:
    """One attempt of a match, as the coordinator sends it to a worker.

    Paths never travel: a worker shares no file system with the coordinator;
    entries come by digest (``spec.entries``). The heartbeat timing is the
    coordinator's (its lease depends on it).
    """

    run: str
    attempt: int
    spec: MatchSpec
    heartbeat_s: float = 5.0
    heartbeat_ttl_s: float = 15.0
    #: a second copy of a straggling attempt (docs/fleet.md): the worker that plays the first
    #: copy (its enrolled name), which hands this one back for another worker to take
    copy_of: str = ""
    #: a verification replay of an accepted attempt (``timing.verify_sample``, docs/fleet.md): the
    #: worker that played it (its enrolled name), which hands this one back for another to take
    verify_of: str = ""
    #: the worker processes (``--name``) whose ceilings refused this match: each passes it on to
    #: another worker, so a match reaches every connected worker within a few offers
    refused_by: tuple[str, ...] = ()
    v: int = ENVELOPE_VERSION

    def __post_init__(self) -> None:
        if self.v != ENVELOPE_VERSION:  # the codec reports it as the envelope's own error
            raise ValueError(f"unknown envelope version {self.v!r}; upgrade this worker")


def task_digest(signed_envelope: str | bytes) -> str:
    """What binds a ``started`` note to the task it answers: a digest of the signed envelope as
    the worker received it (the coordinator keeps the digest of each one it sends)."""
    raw = signed_envelope.encode() if isinstance(signed_envelope, str) else signed_envelope
    return hashlib.sha256(raw).hexdigest()[:32]


@dataclass(frozen=True)
class Started:
    """A worker began playing an attempt. ``execution`` is unique per task execution,
    so a second one for the same attempt means the broker redelivered the task (and is
    believed only once the first execution's heartbeat is gone: docs/fleet.md).

    ``run`` and ``task`` (``task_digest`` of the envelope) bind the note to the task it
    answers: a note for another run, or for no task the coordinator sent, proves nothing."""

    match_id: str
    attempt: int
    worker: str = ""
    execution: str = ""
    ts: float = 0.0  # the worker's wall clock (time.time()), for logs only
    #: it plays a second copy of a straggling attempt (``TaskEnvelope.copy_of``)
    copy: bool = False
    #: it plays a verification replay (``TaskEnvelope.verify_of``)
    verify: bool = False
    #: the run and the task (``task_digest`` of its signed envelope) this start answers
    run: str = ""
    task: str = ""
    kind: Literal["started"] = "started"


@dataclass(frozen=True)
class Finished:
    """A worker played an attempt (a failure of its machine is a ``system_error`` result)."""

    match_id: str
    attempt: int
    result: MatchResult
    worker: str = ""
    #: the run the attempt belongs to: a result is bound to its run, match and attempt (and,
    #: through ``result.digests``, to the code it played; docs/fleet.md)
    run: str = ""
    #: the result of a verification replay (``TaskEnvelope.verify_of``): never official
    verify: bool = False
    kind: Literal["result"] = "result"


@dataclass(frozen=True)
class Skipped:
    """A worker dropped a task unplayed: the run no longer wanted that attempt, or (``reason``
    set) the worker refuses it (quarantined, a limit above its ceilings) and hands it back."""

    match_id: str
    attempt: int
    worker: str = ""
    reason: str = ""
    kind: Literal["skipped"] = "skipped"


#: what a worker pushes to a run's inbox
Note = Started | Finished | Skipped
_NOTE_KINDS: dict[str, type[Started] | type[Finished] | type[Skipped]] = {
    "started": Started,
    "result": Finished,
    "skipped": Skipped,
}


class _Kind(msgspec.Struct):
    kind: str = ""


_kind_only = msgspec.json.Decoder(_Kind)


def decode_note(raw: bytes | str) -> Note:
    """The note in ``raw``; ``WireError`` when it is not one. Its ``kind`` is read first
    (msgspec skips every other member unparsed), then the note is decoded as that kind."""
    try:
        kind = _kind_only.decode(raw).kind
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise WireError(f"not a note: {e}") from None
    note_class = _NOTE_KINDS.get(kind)
    if note_class is None:
        raise WireError(f"unknown note kind {kind!r}")
    return decode(raw, note_class)


@dataclass(frozen=True)
class LiveMatch:
    """What a worker is doing with an attempt right now, for the live progress display only.

    Not a note: it never reaches the store and decides nothing. A worker keeps it in the
    run's live hash (``KEYS.live``), rewritten at most once a second while it changes
    (``workers.live``); ``phase`` is "starting", "building" (``building`` names the
    entries whose build runs now) or "playing" (game ``game`` of ``games``, ``moves``
    moves into it).
    """

    match_id: str
    attempt: int
    worker: str
    players: tuple[str, ...]
    games: int
    phase: str = "starting"
    game: int = 0
    moves: int = 0
    building: tuple[str, ...] = ()

    def describe(self) -> str:
        """``"game 2/4, move 37"``, ``"building greedy, searcher"``, ``"starting"``."""
        if self.phase == "building":
            return "building " + ", ".join(self.building)
        if self.phase == "playing":
            return f"game {self.game}/{self.games}, move {self.moves}"
        return self.phase


@dataclass(frozen=True)
class QuarantineNotice:
    """The organiser tells the worker whose key is ``worker_key`` to stop taking its work
    (signed by the organiser: nobody else can stop a worker)."""

    worker: str
    worker_key: str
    run: str
    reason: str


@dataclass(frozen=True)
class RunShare:
    """A live run, as its coordinator tells the other runs of its organiser how much it would
    queue (``runner.domain.fair_share``). Signed by the organiser, so a holder of the workers'
    broker password cannot make a run up to take the others' turns; rewritten every second with
    a short TTL, so a coordinator that was killed stops counting within seconds."""

    run: str
    #: higher first (``tourney run --priority``)
    priority: int
    #: matches it could queue now (pending plus queued-but-unstarted)
    demand: int
    #: when it was written (seconds since the epoch): an old record copied back is not believed
    at: float
