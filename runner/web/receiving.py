"""An upload, from the request's body to a recorded version (docs/submissions.md): streamed to
disk under ``max_bytes``, hashed as it arrives, then stored by digest and taken in through the
entry intake, at most one intake per core at once, in arrival order."""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from starlette.datastructures import UploadFile

from runner.domain.names import entry_name_problem
from runner.submissions.intake import IntakeOutcome, store_upload, take_upload
from runner.submissions.store import Submission
from runner.web.context import Refusal, ServeContext

log = logging.getLogger("tourney.serve")

#: how much of an upload is read at once
CHUNK = 256 * 1024


class UploadIntake:
    def __init__(self, ctx: ServeContext) -> None:
        self.ctx = ctx
        self._limiter: anyio.CapacityLimiter | None = None

    async def receive(self, team: str, form: Any) -> Submission:
        """The form's ``file`` streamed to disk under the cap (its sha256 taken as it comes),
        then taken in: stored by digest, unpacked, checked, and a version recorded."""
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise Refusal(400, "refused: no file (send it as the multipart field 'file')")
        name = os.path.basename(upload.filename or "upload")
        if entry_name_problem(name, "file name"):
            raise Refusal(400, f"refused: the file name {name[:80]!r}: letters, digits, . _ + - only")
        incoming = self.ctx.contest.incoming / f"upload-{secrets.token_hex(8)}"
        size = 0
        sha = hashlib.sha256()
        try:
            with open(incoming, "wb") as out:
                while chunk := await upload.read(CHUNK):
                    size += len(chunk)
                    if size > self.ctx.rules.max_bytes:
                        raise Refusal(
                            413, f"refused: the upload is larger than {self.ctx.rules.max_bytes} bytes"
                        )
                    out.write(chunk)
                    sha.update(chunk)
            if size == 0:
                raise Refusal(400, "refused: the file is empty")
            # first come, first answered: at most one intake per core at once, in arrival order,
            # rather than every upload of a deadline rush sharing the cores and all answered last
            sub = await anyio.to_thread.run_sync(
                self._take, team, incoming, name, size, sha.hexdigest(), limiter=self._intake_limiter()
            )
        finally:
            incoming.unlink(missing_ok=True)
        if sub.state == "checking":
            self.ctx.wake_checks()
        log.info(
            "upload %s v%d (%d bytes): %s",
            team,
            sub.version,
            size,
            sub.state if not sub.failure else sub.failure,
        )
        return sub

    def _intake_limiter(self) -> anyio.CapacityLimiter:
        if self._limiter is None:  # made in the event loop, on the first upload
            self._limiter = anyio.CapacityLimiter(max(1, len(os.sched_getaffinity(0))))
        return self._limiter

    def _take(self, team: str, incoming: Path, name: str, size: int, sha256: str) -> Submission:
        digest = store_upload(self.ctx.contest, incoming, sha256)
        out: IntakeOutcome = take_upload(
            self.ctx.contest,
            digest,
            name,
            self.ctx.rules,
            team=team,
            game=self.ctx.config.game,
            protocol=self.ctx.protocol,
        )
        return self.ctx.store.add_submission(
            team,
            upload_digest=digest,
            upload_name=name,
            size=size,
            entry_digest=out.entry_digest,
            state="checking" if out.entry_digest else "refused",
            steps=out.steps,
            failure=out.failure,
        )

