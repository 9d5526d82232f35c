"""An upload's request body, streamed once: the multipart file part straight into a file in the
contest's ``incoming/``, its sha256 taken as the bytes pass (docs/submissions.md, "Uploads at
the deadline").

Starlette's ``request.form()`` spools a file part to a temporary file (in memory up to 1 MiB,
then on disk) and the upload was then copied again from there into ``incoming/``: two copies
and a second read of every byte, on the event loop's thread. Here ``python_multipart``'s
parser (the one Starlette uses) is fed the body as it arrives and its callbacks write the one
file part where it is kept; the small fields (the form's ``csrf``) are kept in memory under a
cap. Nothing is stored by digest or recorded here: the caller does that once the whole body
arrived and its other fields were checked.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from runner.web.context import Refusal

#: the most a part's headers, or a field other than the file, may hold
PART_HEADERS_MAX = 16 * 1024
FIELD_MAX = 64 * 1024
#: how many fields (besides the one file) a form may carry
FIELDS_MAX = 4
#: what ``archive_kind`` reads of a file to tell its format
HEAD_BYTES = 512


@dataclass
class StreamedFile:
    """The form's file part, wholly written to ``path``."""

    filename: str
    path: Path
    size: int
    sha256: str
    head: bytes  # its first bytes, to tell its format without opening it again


@dataclass
class StreamedForm:
    fields: dict[str, str] = field(default_factory=dict)
    file: StreamedFile | None = None


class _Receiver:
    """``MultipartParser``'s callbacks: headers of each part, a field's bytes into memory, the
    file's into ``path`` (created new) under ``max_bytes``."""

    def __init__(self, path: Path, file_field: str, max_bytes: int) -> None:
        self.path = path
        self.file_field = file_field
        self.max_bytes = max_bytes
        self.form = StreamedForm()
        self._header_name = b""
        self._header_value = b""
        self._headers_size = 0
        self._disposition = b""
        self._field: str | None = None  # the current part's field name, when it is not the file
        self._value = bytearray()
        self._out: IO[bytes] | None = None
        self._filename = ""
        self._size = 0
        self._sha = hashlib.sha256()
        self._head = bytearray()
        self._in_file = False

    # -- the parser's callbacks ------------------------------------------------------
    def on_part_begin(self) -> None:
        self._disposition = b""
        self._headers_size = 0
        self._field = None
        self._in_file = False
        self._value = bytearray()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._grow_headers(end - start)
        self._header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._grow_headers(end - start)
        self._header_value += data[start:end]

    def on_header_end(self) -> None:
        if self._header_name.lower() == b"content-disposition":
            self._disposition = self._header_value
        self._header_name = b""
        self._header_value = b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self._disposition)
        name = options.get(b"name")
        if name is None:
            raise Refusal(400, "refused: a form part without a name")
        field_name = name.decode("utf-8", "replace")
        if b"filename" in options:
            if field_name != self.file_field or self._out is not None or self.form.file is not None:
                raise Refusal(400, f"refused: send one file, as the multipart field {self.file_field!r}")
            self._filename = options[b"filename"].decode("utf-8", "replace")
            self._out = open(self.path, "xb")  # noqa: SIM115 (closed at the part's end or on error)
            self._in_file = True
            return
        if len(self.form.fields) >= FIELDS_MAX:
            raise Refusal(400, f"refused: more than {FIELDS_MAX} form fields")
        self._field = field_name

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._in_file:
            assert self._out is not None
            self._size += end - start
            if self._size > self.max_bytes:
                raise Refusal(413, f"refused: the upload is larger than {self.max_bytes} bytes")
            chunk = memoryview(data)[start:end]
            self._out.write(chunk)
            self._sha.update(chunk)
            if len(self._head) < HEAD_BYTES:
                self._head += chunk[: HEAD_BYTES - len(self._head)]
            return
        if len(self._value) + end - start > FIELD_MAX:
            raise Refusal(400, f"refused: a form field over {FIELD_MAX} bytes")
        self._value += data[start:end]

    def on_part_end(self) -> None:
        if self._in_file:
            assert self._out is not None
            self._out.close()
            self._out = None
            self._in_file = False
            self.form.file = StreamedFile(
                self._filename, self.path, self._size, self._sha.hexdigest(), bytes(self._head)
            )
        elif self._field is not None:
            self.form.fields[self._field] = self._value.decode("utf-8", "replace")

    # -- limits ------------------------------------------------------------------
    def _grow_headers(self, n: int) -> None:
        self._headers_size += n
        if self._headers_size > PART_HEADERS_MAX:
            raise Refusal(400, f"refused: a form part's headers over {PART_HEADERS_MAX} bytes")

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None


async def stream_form(request: Request, path: Path, *, file_field: str, max_bytes: int) -> StreamedForm:
    """Read ``request``'s multipart body once: its file part (``file_field``) into the new file
    ``path``, its other fields into memory. ``Refusal`` for a body that is not such a form; on
    any failure ``path`` is gone."""
    kind, params = parse_options_header(request.headers.get("content-type", ""))
    if kind != b"multipart/form-data" or b"boundary" not in params:
        raise Refusal(400, "refused: send the upload as multipart/form-data (curl -F file=@FILE)")
    receiver = _Receiver(path, file_field, max_bytes)
    callbacks = {
        "on_part_begin": receiver.on_part_begin,
        "on_part_data": receiver.on_part_data,
        "on_part_end": receiver.on_part_end,
        "on_header_field": receiver.on_header_field,
        "on_header_value": receiver.on_header_value,
        "on_header_end": receiver.on_header_end,
        "on_headers_finished": receiver.on_headers_finished,
    }
    parser = MultipartParser(params[b"boundary"], callbacks)  # type: ignore[arg-type]
    try:
        async for chunk in request.stream():
            parser.write(chunk)
        parser.finalize()
    except FormParserError:
        receiver.close()
        path.unlink(missing_ok=True)
        raise Refusal(400, "refused: the multipart form is malformed") from None
    except BaseException:
        receiver.close()
        path.unlink(missing_ok=True)
        raise
    receiver.close()
    if receiver.form.file is None:
        path.unlink(missing_ok=True)
    return receiver.form
