"""An upload, from the request's body to a recorded version (docs/submissions.md, "Uploads at
the deadline"): the body read once, its file part streamed into ``incoming/`` under
``max_bytes`` and hashed as it arrives (``runner.web.upload_stream``), then stored durably by
its digest and recorded as the team's next version, ``checking`` with its ``received`` step.
That is where the server answers: unpacking and the layout are the next steps of the check
pipeline, in the intake pool (``runner.orchestration.submission_intake``), shown on the
version's page and in the API as they happen. What the first bytes already refuse (not an
archive of a known format) is refused at once, recorded with its failed step."""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Callable

import anyio.to_thread
from starlette.requests import Request

from runner.domain.names import entry_name_problem
from runner.submissions.intake import format_refusal, received_step, store_upload
from runner.submissions.store import Submission
from runner.web.context import Refusal, ServeContext
from runner.web.upload_stream import StreamedFile, stream_form

log = logging.getLogger("tourney.serve")

#: the multipart field that carries the upload
FILE_FIELD = "file"


class UploadIntake:
    def __init__(self, ctx: ServeContext) -> None:
        self.ctx = ctx

    async def receive(
        self, request: Request, team: str, check_fields: Callable[[dict[str, str]], None] | None = None
    ) -> Submission:
        """The request's file streamed to disk under the cap (its sha256 taken as it comes),
        ``check_fields`` run on the form's other fields (the form's CSRF token), then stored by
        digest and recorded: answered at "received"."""
        incoming = self.ctx.contest.incoming / f"upload-{secrets.token_hex(8)}"
        try:
            form = await stream_form(
                request, incoming, file_field=FILE_FIELD, max_bytes=self.ctx.rules.max_bytes
            )
            if check_fields is not None:
                check_fields(form.fields)
            upload = form.file
            if upload is None:
                raise Refusal(400, f"refused: no file (send it as the multipart field {FILE_FIELD!r})")
            name = os.path.basename(upload.filename or "upload")
            if entry_name_problem(name, "file name"):
                raise Refusal(400, f"refused: the file name {name[:80]!r}: letters, digits, . _ + - only")
            if upload.size == 0:
                raise Refusal(400, "refused: the file is empty")
            # the fsyncs and the commit wait on the disk: off the event loop
            sub = await anyio.to_thread.run_sync(self._record, team, upload, name)
        finally:
            incoming.unlink(missing_ok=True)
        if sub.state == "checking":
            self.ctx.wake_intake()
        log.info("upload %s v%d (%d bytes): %s", team, sub.version, sub.size, sub.failure or "received")
        return sub

    def _record(self, team: str, upload: StreamedFile, name: str) -> Submission:
        digest = store_upload(self.ctx.contest, upload.path, upload.sha256, durable=True)
        received = received_step(upload.size, digest)
        refused = format_refusal(upload.head, name, self.ctx.rules)
        unpacked = (
            ("unpacked", "running", "waiting to be unpacked")
            if refused is None
            else ("unpacked", "failed", refused)
        )
        return self.ctx.store.add_submission(
            team,
            upload_digest=digest,
            upload_name=name,
            size=upload.size,
            entry_digest=None,
            state="checking" if refused is None else "refused",
            steps=[received, unpacked],
            failure=refused or "",
        )
