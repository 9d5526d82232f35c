"""The host's half of the sandbox launcher: building it, and speaking to it.

``launcher.c`` runs as PID 1 inside each sandbox (see its header comment for
why). This module compiles it once per source version into a cache
directory, and implements the wire format: requests (``RunRequest``, file
puts), replies (``LauncherResult``), and a ``Channel`` that frames them over
the control socket with deadlines.

The format is native byte order on purpose: both ends always run on the same
machine, and the C side then needs no conversions.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import select
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from runner.domain.match_values import Limits
from workers.cache_paths import helpers_dir
from workers.sandbox.base import HostError
from workers.sandbox.classify import Measurement
from workers.sandbox.limits import cpu_rlimit_s
from workers.sandbox.sampler import StopReason, TreeUsage

LAUNCHER_SOURCE = Path(__file__).with_name("launcher.c")
#: the entries' seccomp filter, which launcher.c includes (part of the launcher's digest)
ENTRY_FILTER_SOURCE = Path(__file__).with_name("entry_filter.h")

# requests (launcher.c: OP_*)
OP_PUT, OP_SYNC, OP_RUN, OP_SPAWN, OP_ABORT, OP_KILL, OP_QUIT, OP_RESET = range(1, 9)
# replies (launcher.c: REPLY_*)
REPLY_OK, REPLY_RESULT, REPLY_SPAWNED = 1, 2, 3
# file kinds of a PUT
PUT_DIR, PUT_FILE, PUT_APPEND, PUT_SYMLINK = 0, 1, 2, 3
# result flags
F_EXITED, F_SIGNALED, F_TIMEOUT, F_STDOUT_OVER, F_LEFT, F_ABORTED, F_KILLED = (1 << i for i in range(7))
# why the host stopped a move (ABORT payload)
ABORT_CPU, ABORT_MEMORY = 1, 2

_HEADER = struct.Struct("=II")
_RUN_REQ = struct.Struct("=IIIQQIIIIIII")
_RESULT = struct.Struct("=IiiIQQQI16sII")
_PUT_HEAD = struct.Struct("=III")
#: file data goes over in pieces of this size (the launcher caps one message at 64 MiB)
PUT_CHUNK = 1 << 20
#: how long the launcher may take to answer a control request: bwrap setting a sandbox up,
#: a put, a spawn, a reset, a kill (each takes milliseconds)
START_TIMEOUT_S = 30.0


# ---- building ---------------------------------------------------------------


def cache_dir() -> Path:
    """Where built helpers live (``workers.cache_paths.helpers_dir``): under the worker's work
    directory, never under a home a system user may not have (docs/deploy.md)."""
    return helpers_dir()


def built_helper(
    source_path: Path,
    name: str,
    extra_sources: tuple[Path, ...] = (),
    *,
    what: str | None = None,
    without_compiler: str = "",
) -> Path:
    """A small C helper of ours, compiled on first use into the cache: keyed by a digest of
    its sources (``extra_sources``: headers it includes), so an upgrade rebuilds it; written
    under a temporary name and renamed, so concurrent workers never run a half written
    binary. ``what`` names it in errors; ``without_compiler`` is the advice when there is no
    compiler."""
    what = what or f"tourney's {name}"
    source = source_path.read_bytes() + b"".join(p.read_bytes() for p in extra_sources)
    digest = hashlib.sha256(source).hexdigest()[:16]
    target = cache_dir() / "sandbox" / f"{name}-{digest}"
    if target.is_file() and os.access(target, os.X_OK):
        return target
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        advice = f"install one (apt install gcc){without_compiler}"
        raise HostError(f"no C compiler (cc) to build {what}: {advice}")
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}-", dir=target.parent)
        os.close(fd)
    except OSError as e:
        raise HostError(f"cannot create the helper cache {target.parent}: {e}") from e
    try:
        proc = subprocess.run(
            [compiler, "-O2", "-Wall", "-o", tmp, str(source_path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if proc.returncode != 0:
            raise HostError(f"cannot build {what} with {compiler}: {proc.stderr.strip()}")
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    except (OSError, subprocess.SubprocessError) as e:
        raise HostError(f"cannot build {what} with {compiler}: {e}") from e
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return target


def launcher_binary() -> Path:
    """The compiled launcher for the current source, built on first use (``built_helper``).
    The sandbox gets a copy through bwrap ``--file``, so the cache need not be readable by the
    sandbox's user."""
    return built_helper(
        LAUNCHER_SOURCE,
        "launcher",
        (ENTRY_FILTER_SOURCE,),
        what="the sandbox launcher",
        without_compiler=", or use 'sandbox: none' for trusted entries only",
    )


# ---- requests ---------------------------------------------------------------


@dataclass(frozen=True)
class RunRequest:
    """What the launcher needs to start one program (launcher.c ``struct run_req``)."""

    argv: list[str]
    stdin: bytes
    wall_ms: int  # 0: no deadline
    cpu_soft_s: int  # 0: no CPU rlimit
    cpu_hard_s: int
    as_bytes: int
    fsize_bytes: int
    nofile: int
    nproc: int  # 0: no process-count limit
    stdout_cap: int
    stderr_keep: int
    #: after the program exits, how long descendants on their way out may take to go
    exit_grace_ms: int = 0

    @classmethod
    def for_move(
        cls, argv: list[str], stdin: bytes, limits: Limits, *, stderr_keep: int, sandbox_procs: int
    ) -> RunRequest:
        soft, hard = cpu_rlimit_s(limits.cpu_s)
        return cls(
            argv=argv,
            stdin=stdin,
            wall_ms=max(1, round(limits.move_wall_s * 1000)),
            cpu_soft_s=soft,
            cpu_hard_s=hard,
            as_bytes=limits.memory_mb << 20,
            fsize_bytes=limits.file_size_mb << 20,
            nofile=limits.open_files,
            # RLIMIT_NPROC counts every process of the sandbox's user in its
            # user namespace, the launcher included
            nproc=limits.processes + sandbox_procs,
            stdout_cap=limits.output_kb * 1024,
            stderr_keep=stderr_keep,
            exit_grace_ms=limits.exit_grace_ms,
        )

    def pack(self) -> bytes:
        args = [a.encode() for a in self.argv]
        if not args or any(b"\0" in a for a in args):
            raise HostError(f"cannot run {self.argv!r}: empty argv or a NUL byte in an argument")
        head = _RUN_REQ.pack(
            self.wall_ms,
            self.cpu_soft_s,
            self.cpu_hard_s,
            self.as_bytes,
            self.fsize_bytes,
            self.nofile,
            self.nproc,
            self.stdout_cap,
            self.stderr_keep,
            len(args),
            len(self.stdin),
            self.exit_grace_ms,
        )
        return b"".join([head, *(a + b"\0" for a in args), self.stdin])


def put_messages(root: Path) -> Iterator[bytes]:
    """PUT payloads that recreate the tree at ``root`` inside the sandbox.

    Regular files, directories and symlinks (as links, never followed);
    anything else (sockets, fifos) is not part of an entry. Modes keep the
    execute bits and give the owner write access: it is a private copy.
    """
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        for name in [*dirnames, *sorted(filenames)]:
            path = base / name
            rel = path.relative_to(root).as_posix().encode()
            st = path.lstat()
            mode = (st.st_mode & 0o7777) | 0o600
            if os.path.islink(path):
                yield _PUT_HEAD.pack(PUT_SYMLINK, 0o777, len(rel)) + rel + os.readlink(path).encode()
            elif path.is_dir():
                yield _PUT_HEAD.pack(PUT_DIR, mode | 0o700, len(rel)) + rel
            elif path.is_file():
                with open(path, "rb") as f:
                    kind = PUT_FILE
                    while True:
                        chunk = f.read(PUT_CHUNK)
                        yield _PUT_HEAD.pack(kind, mode, len(rel)) + rel + chunk
                        kind = PUT_APPEND
                        if len(chunk) < PUT_CHUNK:
                            break


def tree_size(root: Path) -> int:
    """Bytes the regular files under ``root`` take on a tmpfs (whole pages each;
    symlinks not followed)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                total += -(-st.st_size // page) * page
    return total


def tree_stats(root: Path) -> tuple[int, int]:
    """(bytes on a tmpfs, inodes) of the tree at ``root``: what its copy in a
    sandbox takes (every file, directory and symlink is one inode)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = inodes = 0
    for dirpath, dirnames, filenames in os.walk(root):
        inodes += len(dirnames) + len(filenames)
        for name in filenames:
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                total += -(-st.st_size // page) * page
    return total, inodes


# ---- replies ------------------------------------------------------------------


@dataclass(frozen=True)
class LauncherResult:
    """How one program run ended, as the launcher saw it (launcher.c ``struct result``)."""

    flags: int
    exit_code: int
    signal: int
    abort_reason: int
    wall_us: int
    cpu_us: int
    maxrss_kb: int
    left_count: int
    left_comm: str
    stdout: bytes
    stderr: bytes

    @classmethod
    def unpack(cls, payload: bytes) -> LauncherResult:
        if len(payload) < _RESULT.size:
            raise HostError(f"sandbox launcher sent a short result ({len(payload)} bytes)")
        (flags, code, sig, reason, wall_us, cpu_us, rss, left, comm, out_len, err_len) = _RESULT.unpack_from(
            payload
        )
        body = payload[_RESULT.size :]
        if len(body) != out_len + err_len:
            raise HostError("sandbox launcher sent a malformed result")
        return cls(
            flags=flags,
            exit_code=code,
            signal=sig,
            abort_reason=reason,
            wall_us=wall_us,
            cpu_us=cpu_us,
            maxrss_kb=rss,
            left_count=left,
            left_comm=comm.split(b"\0", 1)[0].decode(errors="replace"),
            stdout=body[:out_len],
            stderr=body[out_len:],
        )

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)


def measure(result: LauncherResult, usage: TreeUsage, stopped_for: StopReason | None = None) -> Measurement:
    """What the launcher's report and the samples say about one run (``classify`` judges it)."""
    return Measurement(
        exit_code=result.exit_code if result.has(F_EXITED) else None,
        signal=result.signal if result.has(F_SIGNALED) else None,
        wall_ms=result.wall_us / 1000.0,
        cpu_ms=max(result.cpu_us / 1000.0, usage.cpu_ms),
        peak_rss_kb=result.maxrss_kb,
        tree_rss_kb=usage.peak_rss_kb,
        peak_processes=usage.peak_processes,
        timed_out=result.has(F_TIMEOUT),
        output_over=result.has(F_STDOUT_OVER),
        left_count=(result.left_count or 1) if result.has(F_LEFT) else 0,
        left_comm=result.left_comm,
        stderr_tail=result.stderr,
        stopped_for=stopped_for,
        oom_kills=usage.oom_kills,
    )


# ---- the channel ----------------------------------------------------------------


class ChannelClosed(HostError):
    """The launcher went away (its sandbox died or could not start)."""


class Channel:
    """Framed messages over the control socket, with deadlines on reads."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._buf = bytearray()
        self._poll = select.poll()
        self._poll.register(sock.fileno(), select.POLLIN)

    def send(self, op: int, payload: bytes = b"", fds: tuple[int, ...] = ()) -> None:
        header = _HEADER.pack(op, len(payload))
        try:
            if fds:
                socket.send_fds(self.sock, [header], list(fds))
                self.sock.sendall(payload)
            else:
                self.sock.sendall(header + payload)
        except OSError as e:
            raise ChannelClosed(f"sandbox launcher is gone ({e})") from e

    def recv(self, timeout_s: float | None) -> tuple[int, bytes] | None:
        """The next message, or None if none is complete within ``timeout_s`` (None: wait).

        ``timeout_s=0`` still reads what has already arrived.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            msg = self._take()
            if msg is not None:
                return msg
            if deadline is None:
                wait_ms = -1
            else:
                left = deadline - time.monotonic()
                wait_ms = max(0, math.ceil(left * 1000))
            if not self._poll.poll(wait_ms):
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                continue
            try:
                data = self.sock.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as e:
                raise ChannelClosed(f"sandbox launcher is gone ({e})") from e
            if not data:
                raise ChannelClosed("sandbox launcher exited")
            self._buf += data

    def fileno(self) -> int:
        return self.sock.fileno()

    def has_message(self) -> bool:
        return self._peek_len() is not None

    def _peek_len(self) -> int | None:
        if len(self._buf) < _HEADER.size:
            return None
        _, n = _HEADER.unpack_from(self._buf)
        return n if len(self._buf) >= _HEADER.size + n else None

    def _take(self) -> tuple[int, bytes] | None:
        n = self._peek_len()
        if n is None:
            return None
        op, _ = _HEADER.unpack_from(self._buf)
        payload = bytes(self._buf[_HEADER.size : _HEADER.size + n])
        del self._buf[: _HEADER.size + n]
        return op, payload

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
