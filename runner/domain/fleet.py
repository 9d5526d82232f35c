"""The organiser's keys and fleet registry: who may play, known by key (docs/fleet.md).

One organiser, one *organiser key* (Ed25519, ``runner.domain.signing``), made on
first use in the organiser's home (``$TOURNEY_HOME``, else
``$XDG_CONFIG_HOME/tourney``, else ``~/.config/tourney``; the directory 0700,
the key 0600). It signs every task of every run of that organiser.

``tourney fleet add NAME`` enrols a worker: a new worker key pair, whose
public half goes into the registry (``fleet.json`` in the home: name, public
key, enrolment time, revoked flag and reason) and whose private half goes,
with the organiser's public key, into one *worker key file* for that machine
alone. That file serves every run of the organiser: nothing is copied or
restarted per run. ``tourney fleet revoke NAME --reason ...`` marks the key
revoked; a running coordinator re-reads the registry when its file changes
(``RegistryView``) and refuses the key's notes from then on.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runner.domain.private_files import read_private_text
from runner.domain.redaction import register_key_material
from runner.domain.signing import KeyFileError, PublicKey, SigningKey, keyring
from runner.errors import UsageError

HOME_ENV = "TOURNEY_HOME"
#: where a worker finds its key file when not given ``--key-file``
WORKER_KEY_FILE_ENV = "TOURNEY_WORKER_KEY_FILE"
ORGANISER_KEY_NAME = "organiser.key"
REGISTRY_NAME = "fleet.json"
#: worker names: what a shell, a file name and a Redis key take without quoting
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


class FleetError(UsageError):
    """A fleet command cannot do what was asked (unknown or duplicate name, bad file): exit 2."""


def organiser_home(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV]).expanduser()
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "tourney"


def _home_dir(home: Path) -> Path:
    """The organiser's home directory, made if missing; ``FleetError`` (exit 2, one line) when
    it cannot be: a file in its place, a file above it, no permission."""
    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        named = f"{HOME_ENV}={home}" if os.environ.get(HOME_ENV) else f"the organiser's home {home}"
        why = f"cannot be made ({e.strerror or e})"
        if isinstance(e, FileExistsError):
            why = "is not a directory"
        blocker = next((p for p in (home, *home.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None and blocker != home:
            why = f"cannot be made: {blocker} is not a directory"
        raise FleetError(
            f"{named} {why}; it must be a directory (the organiser's key and fleet registry live there)"
        ) from None
    return home


def check_organiser_home() -> Path:
    """``organiser_home()``, made if missing, or ``FleetError``: checked before a run makes
    anything, so that a bad ``TOURNEY_HOME`` costs no run directory and no cluster start."""
    return _home_dir(organiser_home())


def write_new_private(path: Path, text: str) -> None:
    """Write a new 0600 file (never readable by others, not even briefly); ``FileExistsError``
    if there is one."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def organiser_key(home: Path | None = None) -> SigningKey:
    """The organiser's private key, made on first use (two runs starting at once make one)."""
    path = _home_dir(home or organiser_home()) / ORGANISER_KEY_NAME
    with contextlib.suppress(FileExistsError):
        write_new_private(path, SigningKey.generate().hex() + "\n")
    return _taken(SigningKey.from_hex(read_private_text(path, "the organiser key", KeyFileError)))


# -- a worker's key file -------------------------------------------------------------
@dataclass(frozen=True)
class WorkerKey:
    """What one enrolled machine holds: its name, its private key, the organisers it serves."""

    name: str
    key: SigningKey
    organisers: tuple[PublicKey, ...]

    def organiser_ring(self) -> dict[str, PublicKey]:
        return keyring(*self.organisers)

    def to_json(self) -> str:
        return json.dumps(
            {
                "worker": self.name,
                "worker_key": self.key.hex(),
                "worker_public_key": self.key.public.hex(),
                "organisers": [k.hex() for k in self.organisers],
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str, where: str) -> WorkerKey:
        try:
            d = json.loads(text)
            organisers = tuple(PublicKey.from_hex(h) for h in d["organisers"])
            if not organisers:
                raise ValueError("names no organiser")
            return cls(str(d["worker"]), SigningKey.from_hex(d["worker_key"]), organisers)
        except (ValueError, KeyError, TypeError, AttributeError, KeyFileError) as e:
            raise KeyFileError(
                f"{where}: not a worker key file ({e}); expected the file `tourney fleet add NAME` wrote"
            ) from None


def read_worker_key(path: Path) -> WorkerKey:
    held = WorkerKey.from_json(read_private_text(path, "the worker key file", KeyFileError), str(path))
    _taken(held.key)
    return held


def _taken(key: SigningKey) -> SigningKey:
    """``key``, once this process holds it: from now on it is redacted from whatever an entry
    prints (``runner.domain.redaction``; docs/sandbox.md, "Secrets never reach the report")."""
    register_key_material(key.secret)
    return key


def load_worker_key(path: Path | None = None, *, environ: dict[str, str] | None = None) -> WorkerKey:
    """The worker key from ``path``, else ``$TOURNEY_WORKER_KEY_FILE``."""
    env = os.environ if environ is None else environ
    if path is None and env.get(WORKER_KEY_FILE_ENV):
        path = Path(env[WORKER_KEY_FILE_ENV])
    if path is None:
        raise KeyFileError(
            f"no worker key: pass --key-file FILE (mode 0600) or set {WORKER_KEY_FILE_ENV}; "
            "the organiser makes one with `tourney fleet add NAME`"
        )
    return read_worker_key(path)


# -- the registry ----------------------------------------------------------------------
@dataclass(frozen=True)
class Member:
    name: str
    public: PublicKey
    enrolled: str
    revoked: bool = False
    reason: str = ""
    #: set by a coordinator whose verification replay disagreed with this worker's transcript
    #: (docs/fleet.md, "Verification"): shown by ``tourney fleet list``; the key still works
    suspect: str = ""
    #: when (seconds since the epoch) the organiser last lifted its quarantine
    #: (``tourney fleet unquarantine``): every run's quarantine made before then ends
    lifted: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "public_key": self.public.hex(),
            "enrolled": self.enrolled,
            "revoked": self.revoked,
            "reason": self.reason,
        }
        if self.suspect:
            d["suspect"] = self.suspect
        if self.lifted:
            d["lifted"] = self.lifted
        return d


def _read_registry(path: Path) -> dict[str, Member]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    try:
        workers = json.loads(text)["workers"]
        return {
            name: Member(
                name,
                PublicKey.from_hex(d["public_key"]),
                str(d["enrolled"]),
                bool(d["revoked"]),
                d["reason"],
                str(d.get("suspect", "")),
                float(d.get("lifted", 0.0)),
            )
            for name, d in workers.items()
        }
    except (ValueError, KeyError, TypeError, AttributeError, KeyFileError) as e:
        raise FleetError(
            f"{path}: not a fleet registry ({e}); expected the file `tourney fleet` writes"
        ) from None


class Fleet:
    """The organiser's registry in ``home`` (changes under a lock; written whole, then renamed,
    so a coordinator reading it never sees half a file)."""

    def __init__(self, home: Path | None = None) -> None:
        self.home = _home_dir(home or organiser_home())
        self.path = self.home / REGISTRY_NAME

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Member]]:
        with open(self.home / "fleet.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            members = _read_registry(self.path)
            yield members
            tmp = self.path.with_suffix(".tmp")
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            write_new_private(
                tmp, json.dumps({"workers": {n: m.to_dict() for n, m in members.items()}}, indent=2)
            )
            os.replace(tmp, self.path)

    def members(self) -> dict[str, Member]:
        return _read_registry(self.path)

    def enrol(self, name: str, out: Path | None = None) -> Path:
        """Enrol ``name``: a new key pair; the worker key file written to ``out`` (default
        ``<home>/workers/NAME.key``), which is returned."""
        if not _NAME.fullmatch(name):
            raise FleetError(f"worker name {name!r}: letters, digits and . _ @ - only (at most 64)")
        path = out or self.home / "workers" / f"{name}.key"
        key = SigningKey.generate()
        wk = WorkerKey(name, key, (organiser_key(self.home).public,))
        with self._locked() as members:
            if name in members:
                raise FleetError(
                    f"worker {name!r} is already enrolled ({members[name].enrolled}); pick another name"
                )
            try:
                write_new_private(path, wk.to_json() + "\n")
            except FileExistsError:
                raise FleetError(f"{path} exists: remove it or give --out another file") from None
            now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            members[name] = Member(name, key.public, now)
        return path

    def revoke(self, name: str, reason: str) -> Member:
        with self._locked() as members:
            if name not in members:
                raise FleetError(f"no worker {name!r} is enrolled (`tourney fleet list` shows them)")
            members[name] = replace(members[name], revoked=True, reason=reason)
            return members[name]

    def unquarantine(self, name: str) -> Member:
        """Lift ``name``'s quarantine in every run of this organiser (a running coordinator reads
        it within a second; a resumed one at start). A revoked key stays revoked."""
        with self._locked() as members:
            if name not in members:
                raise FleetError(f"no worker {name!r} is enrolled (`tourney fleet list` shows them)")
            if members[name].revoked:
                raise FleetError(
                    f"worker {name!r} is revoked ({members[name].reason}); enrol the machine again "
                    "under a new name (`tourney fleet add`)"
                )
            members[name] = replace(members[name], lifted=time.time(), suspect="")
            return members[name]

    def flag_suspect(self, name: str, why: str) -> None:
        """Mark an enrolled worker suspect (a verification replay disagreed with it); nothing if
        ``name`` is not enrolled here."""
        with self._locked() as members:
            if name in members:
                members[name] = replace(members[name], suspect=why)

    def local_worker_key(self) -> Path:
        """The key file of this machine's own worker (``tourney run``'s local workers), enrolled
        on first use as ``local@<host>``."""
        name = f"local@{socket.gethostname()}"[:64]
        path = self.home / "workers" / f"{name}.key"
        member = self.members().get(name)
        if member is not None and path.exists():
            if member.revoked:
                raise FleetError(
                    f"this machine's worker key {name} is revoked ({member.reason}); "
                    f"delete {path} and its registry entry, or run with --no-local-workers"
                )
            return path
        with contextlib.suppress(FleetError):  # another run enrolled it meanwhile: use that
            self.enrol(name, path)
        return path


class RegistryView:
    """The coordinator's view of the registry, read again whenever its file changes (checked
    at most every ``every_s``: a revocation takes effect within seconds, at a stat's cost)."""

    def __init__(self, home: Path | None = None, every_s: float = 0.5) -> None:
        self.path = _home_dir(home or organiser_home()) / REGISTRY_NAME
        self.every_s = every_s
        self._stamp: tuple[int, int] | None = None
        self._checked = float("-inf")
        self.by_key: dict[str, Member] = {}
        #: members whose quarantine was lifted since ``take_lifts`` was last called
        self._lifts: list[Member] = []

    def refresh(self, now: float, *, force: bool = False) -> list[Member]:
        """Read the registry again if it changed (``force``: checked now, whenever it last was);
        the members revoked since the last read."""
        if not force and now - self._checked < self.every_s:
            return []
        self._checked = now
        try:
            st = self.path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = (0, 0)
        if stamp == self._stamp:
            return []
        self._stamp = stamp
        before = self.by_key
        self.by_key = {m.public.key_id: m for m in _read_registry(self.path).values()}
        self._lifts += [
            m
            for k, m in self.by_key.items()
            if m.lifted and (k not in before or before[k].lifted != m.lifted)
        ]
        return [m for k, m in self.by_key.items() if m.revoked and not (k in before and before[k].revoked)]

    def take_lifts(self) -> list[Member]:
        """The members whose quarantine was lifted (at ``Member.lifted``) since the last call."""
        lifts, self._lifts = self._lifts, []
        return lifts

    def keyring(self) -> dict[str, PublicKey]:
        """Every enrolled key, revoked ones too (a revoked key's notes are still named)."""
        return {k: m.public for k, m in self.by_key.items()}


def rejected_key_lines(rejected_keys: dict[str, Any]) -> list[str]:
    """One line per key whose notes a run refused (no enrolled worker holds it): the run's
    summary, ``tourney standings`` and the report name such a taker (docs/fleet.md)."""
    lines = []
    for key_id, rec in sorted(rejected_keys.items()):
        if not isinstance(rec, dict):
            continue
        claimed = ", ".join(str(c) for c in rec.get("claimed") or []) or "?"
        who = "unsigned notes" if key_id == "unsigned" else f"Key {key_id} (not enrolled by this organiser)"
        lines.append(f"{who} REJECTED: {rec.get('notes', 0)} note(s), claiming worker(s) {claimed}")
    return lines
