"""One upload, from its bytes on disk to an entry the workers can build (docs/submissions.md).

received (the upload stored durably by its sha256, ``store_upload``: the web app records the
version and answers there, docs/submissions.md "Uploads at the deadline") -> unpacked
(``runner.submissions.archive``, or a bare source file) -> layout
(``runner.submissions.layouts``, then the entry directory intake) -> the entry directory kept
by its digest in ``entries/``. Each step that passed, and the first that did not, as
``(step, status, detail)`` for the store.

``intake_job`` is what the server's intake pool (``runner.orchestration.submission_intake``)
runs in a process of its own, off the web app's answer: unpack, layout, keep, and pack the
entry for the workers (``artifacts/<digest>.tar.gz``, ``ensure_artifact``: a MiB of data that
does not compress costs about 60 ms of zlib), so the check loop finds it ready.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from runner.config.submission_rules import SubmissionsModel
from runner.domain.entries import EntryError
from runner.domain.packing import pack_entry
from runner.submissions.archive import (
    NOT_AN_ARCHIVE,
    ArchiveRefused,
    Caps,
    archive_kind,
    archive_kind_of_head,
    tree_root,
    unpack_archive,
)
from runner.submissions.contest_dir import ContestDir
from runner.submissions.layouts import LayoutRefused, single_file_upload, take_in

StepRow = tuple[str, str, str]


@dataclass
class IntakeOutcome:
    """What became of an upload: its entry's digest (None: refused) and the steps it went through."""

    entry_digest: str | None
    steps: list[StepRow] = field(default_factory=list)
    failure: str = ""


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1024 * 1024):
            h.update(chunk)
    return h.hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def store_upload(
    contest: ContestDir, incoming: Path, digest: str | None = None, *, durable: bool = False
) -> str:
    """Move a fully received upload into ``uploads/<sha256>``; returns the digest (``digest``:
    the sha256 already computed as the bytes arrived). ``durable``: its bytes and its name are
    on the disk before this returns (the server answers an upload once it is stored: a power
    cut after the answer must not lose it)."""
    digest = digest or file_sha256(incoming)
    final = contest.uploads / digest
    if final.is_file():  # the same bytes, stored already (anything else there: os.replace fails)
        incoming.unlink()
    else:
        if durable:
            _fsync(incoming)
        os.replace(incoming, final)
        if durable:
            _fsync(contest.uploads)
    return digest


def received_step(size: int, upload_digest: str) -> StepRow:
    return ("received", "ok", f"{size} bytes, sha256 {upload_digest[:16]}")


def format_refusal(head: bytes, upload_name: str, rules: SubmissionsModel) -> str | None:
    """Why an upload cannot be unpacked, told by its first bytes alone (None: it may be): the
    refusal the server answers at once, before the upload is recorded as received."""
    if archive_kind_of_head(head) is not None:
        return None
    if rules.layout == "potm" and "." in upload_name:
        return None  # POTM's one source file
    return NOT_AN_ARCHIVE


def take_upload(
    contest: ContestDir,
    upload_digest: str,
    upload_name: str,
    rules: SubmissionsModel,
    *,
    team: str,
    game: str,
    protocol: str,
) -> IntakeOutcome:
    """Unpack and check the stored upload ``upload_digest``; on success its entry is in
    ``entries/<digest>`` (``ensure_artifact`` packs it for the workers)."""
    upload = contest.uploads / upload_digest
    out = IntakeOutcome(None, [received_step(upload.stat().st_size, upload_digest)])
    work = contest.incoming / f"unpack-{secrets.token_hex(8)}"
    caps = Caps.for_upload(rules.max_bytes, rules.max_files, rules.max_depth)
    try:
        try:
            if archive_kind(upload) is None and rules.layout == "potm" and "." in upload_name:
                single_file_upload(upload, upload_name, work)
                out.steps.append(("unpacked", "ok", f"one source file, {upload_name}"))
            else:
                members = unpack_archive(upload, work, caps)
                files = sum(1 for m in members if not m.is_dir)
                out.steps.append(("unpacked", "ok", f"{files} file(s), {sum(m.size for m in members)} bytes"))
        except ArchiveRefused as e:
            out.steps.append(("unpacked", "failed", str(e)))
            out.failure = str(e)
            return out
        root = tree_root(work)
        try:
            intake = take_in(root, rules, team=team, game=game, protocol=protocol)
        except (LayoutRefused, EntryError) as e:
            out.steps.append(("layout", "failed", str(e)))
            out.failure = str(e)
            return out
        digest = intake.spec.digest
        out.steps.append(("layout", "ok", f"{rules.layout}: entry {team}, digest {digest[:16]}"))
        _keep(contest, root, digest)
        out.entry_digest = digest
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _keep(contest: ContestDir, root: Path, digest: str) -> None:
    """The entry directory, by digest (one copy per content)."""
    final = contest.entry(digest)
    if not final.exists():
        with contextlib.suppress(OSError):  # another upload of the same content got there first
            os.rename(root, final)


def ensure_artifact(contest: ContestDir, digest: str) -> Path:
    """``artifacts/<digest>.tar.gz``: the kept entry packed as it travels to the workers
    (written once, atomically; ``pack_entry`` gives the same bytes for the same digest)."""
    artifact = contest.artifact(digest)
    if not artifact.exists():
        tmp = artifact.with_name(f".{digest}.{secrets.token_hex(4)}.tmp")
        tmp.write_bytes(pack_entry(contest.entry(digest)))
        os.replace(tmp, artifact)
    return artifact


def intake_job(
    contest: ContestDir,
    upload_digest: str,
    upload_name: str,
    rules: SubmissionsModel,
    team: str,
    game: str,
    protocol: str,
) -> IntakeOutcome:
    """A received upload taken in, as the intake pool's process runs it: unpacked, checked,
    kept, and packed for the workers (``ensure_artifact``) so the check loop finds it ready."""
    out = take_upload(contest, upload_digest, upload_name, rules, team=team, game=game, protocol=protocol)
    if out.entry_digest is not None:
        ensure_artifact(contest, out.entry_digest)
    return out


def loaded() -> bool:
    """The intake pool's warm-up job: a process that ran it has imported this module and what
    it needs (most of a fresh process's start), before the first upload waits on it."""
    return True
