"""A persistent entry process of ``sandbox: none`` (gomocup; docs/architecture.md,
row 14), spoken to line by line: never blocks the referee on a process that stops
reading, and kills its whole process group when it is done."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import selectors
import time
from pathlib import Path

import psutil

from runner.domain.match_values import Limits
from workers.sandbox.base import InteractiveProcess, RunOutcome, take_line
from workers.sandbox.classify import Measurement, judged
from workers.sandbox.limits import STDERR_TAIL
from workers.sandbox.plain_run import (
    Reaper,
    entry_rlimits,
    kill_group,
    kill_group_and_wait,
    open_pidfd,
    read_into,
    start_process,
)


class PlainProcess(InteractiveProcess):
    """A persistent entry process (gomocup) spoken to line by line."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], limits: Limits):
        self.limits = limits
        # a persistent process has one CPU budget for the game, if any
        self._cpu_limit_s = limits.game_wall_s
        proc = start_process(argv, cwd, env, entry_rlimits(limits, cpu_s=self._cpu_limit_s))
        self._start_error = proc if isinstance(proc, str) else None
        self._proc = None if isinstance(proc, str) else proc
        self._reaper = None if isinstance(proc, str) else Reaper(proc)
        self._buf = bytearray()
        self._err = bytearray()
        self._dead: RunOutcome | None = None
        self._closed = False
        self._pidfd: int | None = None
        self._last_cpu_ms = 0.0
        self._started = time.monotonic()
        if self._proc is not None:
            assert self._proc.stdout is not None and self._proc.stderr is not None
            assert self._proc.stdin is not None
            for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                os.set_blocking(f.fileno(), False)
            self._pidfd = open_pidfd(self._proc.pid)
        else:
            why = self._start_error or "could not start"
            not_started = Measurement(exit_code=None, start_error=why)
            self._dead = judged(not_started, b"", limits, cpu_limit_s=self._cpu_limit_s)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def send(self, text: str) -> None:
        """Write ``text``; a process that stops reading its input for a whole move
        time is killed (the next ``read_line`` reports it), so we never block."""
        if self._dead is not None or self._proc is None or self._proc.stdin is None:
            return  # the next read_line reports why
        fd = self._proc.stdin.fileno()
        data = memoryview(text.encode())
        deadline = time.monotonic() + self.limits.move_wall_s
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while data:
                try:
                    n = os.write(fd, data)
                    data = data[n:]
                    continue
                except BlockingIOError:
                    pass
                except OSError:
                    return  # it died or closed stdin; read_line will see the exit
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._die(timed_out=True)  # it did not read its input for a whole move time
                    return
                sel.select(remaining)

    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        # plain processes are never paused: ``pause`` changes nothing here
        line = self._next_line(timeout_s, stop=True)
        assert line is not None  # stop: a deadline ends in a RunOutcome
        return line

    def wait_line(self, timeout_s: float) -> str | RunOutcome | None:
        return self._next_line(timeout_s, stop=False)

    def _next_line(self, timeout_s: float, *, stop: bool) -> str | RunOutcome | None:
        if self._dead is not None:
            return self._dead
        proc, reaper = self._proc, self._reaper
        assert proc is not None and reaper is not None
        assert proc.stdout is not None and proc.stderr is not None
        out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
        cap = self.limits.output_kb * 1024
        deadline = time.monotonic() + max(0.0, timeout_s)
        sel = selectors.DefaultSelector()
        try:
            sel.register(out_fd, selectors.EVENT_READ)
            sel.register(err_fd, selectors.EVENT_READ)
            if self._pidfd is not None:
                sel.register(self._pidfd, selectors.EVENT_READ)
            exited = False
            while True:
                line = self._take_line()
                if line is not None:
                    return line
                if len(self._buf) > cap:
                    return self._die(output_over=True)  # a line longer than the output cap
                if exited:
                    return self._die_exited()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    # what is already in the pipe counts: read it before judging
                    for key, _ in sel.select(0):
                        if key.fd == out_fd:
                            read_into(out_fd, self._buf, sel)
                    line = self._take_line()
                    if line is not None:
                        return line
                    if not stop:
                        return None
                    return self._die(timed_out=True, wall_limit_s=timeout_s)
                tick = remaining if self._pidfd is not None else min(remaining, 0.005)
                for key, _ in sel.select(tick):
                    if key.fd == out_fd:
                        read_into(out_fd, self._buf, sel)
                    elif key.fd == err_fd:
                        read_into(err_fd, self._err, sel)
                        del self._err[:-STDERR_TAIL]
                    else:
                        exited = True
                if self._pidfd is None and not exited:
                    exited = reaper.poll()
                if exited:
                    # drain what it wrote before dying; a final answer still counts
                    while read_into(out_fd, self._buf, sel):
                        pass
        finally:
            sel.close()

    def _take_line(self) -> str | None:
        return take_line(self._buf)

    def _die_exited(self) -> RunOutcome:
        return self._die()

    def _die(
        self, *, timed_out: bool = False, output_over: bool = False, wall_limit_s: float | None = None
    ) -> RunOutcome:
        """Kill what is left of the process and judge what was measured (``classify`` names the
        verdict): it exited, or the host stopped it for the flag it is given."""
        reaper = self._reaper
        assert reaper is not None
        self._kill()
        measured = reaper.measurement(
            wall_ms=(time.monotonic() - self._started) * 1000.0,
            timed_out=timed_out,
            output_over=output_over,
            stderr_tail=bytes(self._err[-STDERR_TAIL:]),
        )
        ended = judged(
            measured, bytes(self._buf), self.limits, cpu_limit_s=self._cpu_limit_s, wall_limit_s=wall_limit_s
        )
        if ended.failure is None:
            # exited cleanly in the middle of a game: the protocol decides (no_output)
            ended = dataclasses.replace(ended, detail="exited with code 0 before answering")
        self._dead = ended
        return self._dead

    @property
    def cpu_ms(self) -> float:
        if self._reaper is not None and self._reaper.rusage is not None:
            return self._reaper.cpu_ms
        if self._proc is None:
            return 0.0
        try:
            t = psutil.Process(self._proc.pid).cpu_times()
            self._last_cpu_ms = (t.user + t.system + t.children_user + t.children_system) * 1000.0
        except psutil.Error:
            pass
        return self._last_cpu_ms

    def _kill(self) -> None:
        if self._proc is None or self._reaper is None:
            return
        kill_group(self._proc.pid)
        self._reaper.wait()
        kill_group_and_wait(self._proc.pid)  # descendants that outlived the leader

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._kill()
        if self._proc is not None:
            for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                if f is not None:
                    with contextlib.suppress(OSError):
                        f.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
