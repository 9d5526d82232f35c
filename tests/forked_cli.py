"""The suite's ``tourney`` commands, forked from a process that has imported the CLI already.

A ``python -m runner.cli ...`` spends about 0.45 s of CPU importing its command (pydantic's
config models, redis, the domain) before it does anything, and the suite starts some 650 of
them: they were a third of its CPU (304 of 912 s, by process accounting). Here each test
process (each pytest-xdist worker) starts one server, ``python -m tests.forked_cli SOCKET``,
which imports every command once and freezes what it made (``gc.freeze``: a child's collector
leaves those objects, and so their shared pages, alone; ``--version`` forked cost 0.2 s of CPU
before, 0.07 after); a test's command is a child forked from it that
runs ``python -m MODULE`` as the interpreter would. A forked ``tourney`` costs 0.07 to 0.13 s
of CPU where a fresh one cost 0.4 to 0.7; ``make test`` went from 1,064 to 814 s of CPU.

The child is a real process of its own: its pid, session (``start_new_session``), working
directory, environment, argv, standard streams (the test's files or pipes, passed over the
socket), signals and exit status (the server reaps it and sends the status back: a signal's is
negative, as ``subprocess``'s). ``run`` and ``Popen`` here take ``subprocess``'s arguments for
the part of it the tests use, and hand anything else to ``subprocess`` itself.

What a forked child shares with the server, and a fresh interpreter would not have, decides
when a command is still started for real:

* what the interpreter reads as it starts (``PYTHON*``, ``LANG``, ``LC_*``): a command whose
  environment differs there from the server's is started for real;
* the hash seed: every child has the server's, so a test that compares two processes for
  identity (a determinism test) passes ``fork=False``;
* its parent: the server, not the test (``psutil.Process().children()`` of the test misses it);
* its command line is the server's memory rewritten (``setproctitle``): ``ps`` and psutil show
  the command, but as one string, not one word a NUL.

``TOURNEY_TEST_FORK=0`` starts every command for real (to check that nothing depends on this).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

import setproctitle

#: how the tests start a command: ``[*TOURNEY, "run", ...]``
TOURNEY = [sys.executable, "-m", "runner.cli"]
#: ``0``: every command started for real
SWITCH_ENV = "TOURNEY_TEST_FORK"
ROOT = Path(__file__).resolve().parents[1]
#: the CPU of the children reaped so far (the server's accounting), for ``--cpu-durations``
cpu_seconds = 0.0


def _reads_at_start(key: str) -> bool:
    # PYTHONPATH is the child's own: its sys.path is made again from it (_become)
    return (key.startswith(("PYTHON", "LC_")) or key == "LANG") and key != "PYTHONPATH"


def _pythonpath(env: Mapping[str, str], cwd: str) -> list[str]:
    """The entries ``PYTHONPATH`` puts on ``sys.path`` after its first, as the interpreter reads
    it: an empty entry is the working directory, a last empty one nothing."""
    parts = env.get("PYTHONPATH", "").split(os.pathsep)
    if parts[-1] == "":
        parts.pop()
    return [part or cwd for part in parts]


def _start_keys(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if _reads_at_start(k)}


# -- the server (its own process) -----------------------------------------------------------------


#: the server's sys.path after its first entry and its PYTHONPATH's (set in the server)
_BASE_PATH: list[str] = []


def _preload() -> None:
    """Import what the commands import, as far as it imports cleanly: a command whose module
    failed here imports it itself, as a fresh process would."""
    from runner import cli

    for target in cli.HANDLERS.values():
        with contextlib.suppress(Exception):
            importlib.import_module(target.split(":")[0])


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One request: a length-prefixed JSON document and the child's three standard streams."""
    conn.settimeout(10)  # our own clients send it whole; a stuck one must not hold the server
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
    size = int.from_bytes(data[:4], "big")
    body = data[4:]
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            raise EOFError("the client went away mid-request")
        body += more
    return json.loads(body), fds


def serve(path: str) -> dict[str, Any] | None:
    """Fork a child per request until the test process goes away (EOF on stdin). Returns in
    the child only, with its request, for the module's top level to run it."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "parent")
    waiting: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
    print("ready", flush=True)
    while True:
        for key, _ in sel.select():
            if key.data == "parent":
                if not os.read(key.fd, 4096):  # the test process ended: so do we, and our socket
                    listener.close()
                    os.unlink(path)
                    os.rmdir(os.path.dirname(path))
                    return None
            elif key.data == "accept":
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, EOFError, ValueError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    sel.close()
                    listener.close()
                    for _pid, other in waiting.values():
                        other.close()
                    for pidfd in waiting:
                        os.close(pidfd)
                    conn.close()
                    _become(request, fds)
                    return request
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                socket.send_fds(conn, [f"P {pid}\n".encode()], [pidfd])
                waiting[pidfd] = (pid, conn)
                sel.register(pidfd, selectors.EVENT_READ, "child")
            else:  # a child ended: its status (and CPU) to the test that started it
                pid, conn = waiting.pop(key.fd)
                sel.unregister(key.fd)
                os.close(key.fd)
                _, status, usage = os.wait4(pid, 0)
                with contextlib.suppress(OSError):
                    code = os.waitstatus_to_exitcode(status)
                    conn.sendall(f"X {code} {usage.ru_utime + usage.ru_stime:.3f}\n".encode())
                conn.close()


def _std_stream(fd: int, like: io.TextIOWrapper, *, write: bool) -> io.TextIOWrapper:
    """``sys.stdin``/``stdout``/``stderr`` for the child's own descriptor, as the interpreter
    makes them at start: line-buffered on a terminal (stderr always), else block-buffered."""
    raw = io.FileIO(fd, "wb" if write else "rb", closefd=False)
    buffered: Any = io.BufferedWriter(raw) if write else io.BufferedReader(raw)
    return io.TextIOWrapper(
        buffered,
        encoding=like.encoding,
        errors=like.errors,
        line_buffering=write and (fd == 2 or raw.isatty()),
        write_through=write and like.write_through,
    )


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """Make this fork the process ``python -m runner.cli ARGS`` started as the request says."""
    if request["new_session"]:
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # only 0, 1 and 2, as subprocess's close_fds
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGALRM):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # the command line ps and psutil show (a test finds what its run left by it), not the
    # server's: before the environment changes, while the memory after argv is still its own
    setproctitle.setproctitle(" ".join([sys.executable, "-m", request["module"], *request["args"]]))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # found again from TMPDIR, as a fresh process would
    # where `python -m` looks first, then the child's PYTHONPATH, then the interpreter's own
    cwd = os.getcwd()
    sys.path[:] = [cwd, *_pythonpath(os.environ, cwd), *_BASE_PATH]
    importlib.invalidate_caches()

    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        stream = _std_stream(fd, getattr(sys, f"__{name}__"), write=fd > 0)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


# -- the client (in the test's process) -----------------------------------------------------------


class Running(Protocol):
    """What a test does with a command it started: ``subprocess.Popen`` or a forked ``Process``."""

    pid: int
    args: Any
    stdin: Any
    stdout: Any
    stderr: Any

    @property
    def returncode(self) -> int | Any: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def send_signal(self, sig: int) -> None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...
    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]: ...


class _Server:
    """This test process's server, started on first use; it ends, removing its socket, when
    the test process does (EOF on its stdin)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.start_env = _start_keys(env)
        self.path = str(Path(tempfile.mkdtemp(prefix="tourney-fork-")) / "s")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.forked_cli", self.path],
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # a test's killpg of its own group never reaches it
        )
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline()
        if ready != b"ready\n":
            self.proc.kill()
            raise RuntimeError(f"the fork server did not start: {ready!r}")

    def takes(self, env: Mapping[str, str]) -> bool:
        return self.proc.poll() is None and _start_keys(env) == self.start_env


_server: _Server | None = None
_lock = threading.Lock()


def _server_for(env: Mapping[str, str]) -> _Server | None:
    global _server
    if os.environ.get(SWITCH_ENV) == "0":
        return None
    with _lock:
        if _server is None or _server.proc.poll() is not None:
            _server = _Server(env)
        return _server if _server.takes(env) else None


def _fd_for(target: Any, default: int) -> tuple[int, IO[bytes] | None, bool]:
    """The descriptor a child gets for ``stdin``/``stdout``/``stderr=target``, the test's end
    of a pipe (or None) and whether the descriptor is a new one to close once sent."""
    if target is None:
        return os.dup(default), None, True
    if target == subprocess.DEVNULL:
        return os.open(os.devnull, os.O_RDWR), None, True
    if target == subprocess.PIPE:
        r, w = os.pipe()
        if default == 0:
            return r, os.fdopen(w, "wb"), True
        return w, os.fdopen(r, "rb"), True
    if isinstance(target, int):
        return target, None, False
    return target.fileno(), None, False


class Process:
    """A forked command, with the part of ``subprocess.Popen`` the tests use."""

    def __init__(
        self,
        args: Sequence[str],
        server: _Server,
        *,
        cwd: str | os.PathLike[str] | None,
        env: Mapping[str, str],
        stdin: Any,
        stdout: Any,
        stderr: Any,
        start_new_session: bool,
        text: bool,
    ) -> None:
        self.args = list(args)
        self.returncode: int | None = None
        self._text = text
        fd0, self.stdin, close0 = _fd_for(stdin, 0)
        fd1, self.stdout, close1 = _fd_for(stdout, 1)
        if stderr == subprocess.STDOUT:
            fd2, self.stderr, close2 = os.dup(fd1), None, True
        else:
            fd2, self.stderr, close2 = _fd_for(stderr, 2)
        ends = [(fd0, close0), (fd1, close1), (fd2, close2)]
        request = {
            "module": self.args[2],
            "args": self.args[3:],
            "cwd": os.path.abspath(cwd if cwd is not None else os.getcwd()),
            "env": dict(env),
            "new_session": start_new_session,
        }
        body = json.dumps(request).encode()
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._conn.connect(server.path)
            socket.send_fds(self._conn, [len(body).to_bytes(4, "big") + body], [fd for fd, _ in ends])
        finally:
            for fd, close in ends:
                if close:
                    os.close(fd)
        msg, fds, _flags, _addr = socket.recv_fds(self._conn, 64, 1)
        if not msg.startswith(b"P ") or not fds:
            raise RuntimeError(f"the fork server did not start {self.args}: {msg!r}")
        first, _, rest = msg.partition(b"\n")
        self.pid = int(first.split()[1])
        self._pidfd = fds[0]
        self._pending = rest  # the exit line, had it come in the same read

    # -- status
    def _read_status(self, timeout: float | None) -> bool:
        self._conn.settimeout(timeout)
        try:
            while b"\n" not in self._pending:
                more = self._conn.recv(256)
                if not more:
                    raise RuntimeError(f"the fork server went away while {self.args} ran")
                self._pending += more
        except (TimeoutError, BlockingIOError):
            return False
        global cpu_seconds
        _x, code, cpu = self._pending.split(b"\n", 1)[0].split()
        self.returncode = int(code)
        cpu_seconds += float(cpu)
        self._conn.close()
        os.close(self._pidfd)
        return True

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read_status(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and not self._read_status(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    # -- output
    def _decoded(self, data: bytes | None) -> Any:
        if data is None or not self._text:
            return data
        return data.decode().replace("\r\n", "\n").replace("\r", "\n")

    def communicate(self, input: str | bytes | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Feed ``input``, read the pipes to their end, then wait, as ``Popen.communicate``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks: dict[Any, list[bytes]] = {}
        with selectors.DefaultSelector() as sel:
            for pipe in (self.stdout, self.stderr):
                if pipe is not None:
                    chunks[pipe] = []
                    sel.register(pipe, selectors.EVENT_READ)
            if self.stdin is not None:
                data = input.encode() if isinstance(input, str) else (input or b"")
                with contextlib.suppress(BrokenPipeError):
                    self.stdin.write(data)
                    self.stdin.close()
            while sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0)
                for key, _ in sel.select(left):
                    reader: Any = key.fileobj
                    piece = os.read(reader.fileno(), 1 << 16)
                    if piece:
                        chunks[reader].append(piece)
                    else:
                        sel.unregister(reader)
                        reader.close()
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.wait(left)
        out = b"".join(chunks[self.stdout]) if self.stdout is not None else None
        err = b"".join(chunks[self.stderr]) if self.stderr is not None else None
        return self._decoded(out), self._decoded(err)

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc: object) -> None:
        for pipe in (self.stdin, self.stdout, self.stderr):
            if pipe is not None:
                pipe.close()
        self.wait()


def _forkable(args: Sequence[str], fork: bool) -> bool:
    """``python -m MODULE ...`` with this interpreter: ``tourney`` (or tests/fork_probe.py)."""
    return fork and len(args) > 2 and list(args[:2]) == [sys.executable, "-m"]


def Popen(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: Any = None,
    stdout: Any = None,
    stderr: Any = None,
    start_new_session: bool = False,
    text: bool = False,
    fork: bool = True,
) -> Running:
    """``subprocess.Popen(args, ...)``, forked where ``args`` is a ``tourney`` command."""
    full_env = dict(os.environ if env is None else env)
    server = _server_for(full_env) if _forkable(args, fork) else None
    if server is None:
        return subprocess.Popen(
            args, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
            start_new_session=start_new_session, text=text,
        )  # fmt: skip
    return Process(
        args, server, cwd=cwd, env=full_env, stdin=stdin, stdout=stdout, stderr=stderr,
        start_new_session=start_new_session, text=text,
    )  # fmt: skip


def run(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    stdin: Any = None,
    stdout: Any = None,
    stderr: Any = None,
    capture_output: bool = False,
    text: bool = False,
    timeout: float | None = None,
    check: bool = False,
    start_new_session: bool = False,
    fork: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(args, ...)``, forked where ``args`` is a ``tourney`` command."""
    if capture_output:
        stdout = stderr = subprocess.PIPE
    if input is not None:
        stdin = subprocess.PIPE
    proc = Popen(
        args, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
        start_new_session=start_new_session, text=text, fork=fork,
    )  # fmt: skip
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    except BaseException:
        proc.kill()
        raise
    code = proc.wait()
    done = subprocess.CompletedProcess(list(args), code, out, err)
    if check:
        done.check_returncode()
    return done


@contextlib.contextmanager
def no_server() -> Iterator[None]:
    """Within: every command started for real."""
    before = os.environ.get(SWITCH_ENV)
    os.environ[SWITCH_ENV] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[SWITCH_ENV]
        else:
            os.environ[SWITCH_ENV] = before


if __name__ == "__main__":
    _BASE_PATH[:] = sys.path[1 + len(_pythonpath(os.environ, os.getcwd())) :]
    _preload()
    gc.freeze()
    request = serve(sys.argv[1])
    if request is None:
        sys.exit(0)
    # the child: the command, as `python -m MODULE ARGS` runs it: argv[0] is the module's file,
    # and the module is __main__ (where multiprocessing's spawn finds it again)
    if request["module"] != "runner.cli":
        sys.argv = ["-m", *request["args"]]
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        sys.exit(0)
    # runner.cli itself is imported already: its main is called (runpy would run its module again)
    from runner import cli

    sys.argv = [str(cli.__file__), *request["args"]]
    sys.modules["__main__"] = cli
    sys.exit(cli.main())
