"""A persistent entry process in a bubblewrap sandbox (gomocup; docs/architecture.md,
row 14): its stdin and stdout are the host's directly, the launcher keeps its stderr tail
and reports its end, and the sandbox's cgroup freezes it between its turns."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import select
import time
from typing import TYPE_CHECKING

from runner.domain.match_values import Limits
from workers.sandbox.base import HostError, InteractiveProcess, RunOutcome, take_line
from workers.sandbox.classify import Measurement, judged
from workers.sandbox.launcher import (
    OP_KILL,
    REPLY_OK,
    REPLY_RESULT,
    START_TIMEOUT_S,
    ChannelClosed,
    LauncherResult,
    measure,
)
from workers.sandbox.sampler import CGROUP_FIRST_SAMPLE_S, FIRST_SAMPLE_S, StopReason, TreeUsage, TreeWatch
from workers.sandbox.turn_switch import TurnSwitch

if TYPE_CHECKING:  # the sandbox makes its process: only its type is needed here
    from workers.sandbox.bwrap_sandbox import Sandbox


class BwrapProcess(InteractiveProcess):
    """A persistent entry process (gomocup): its stdin and stdout are ours directly;
    the launcher keeps its stderr tail and reports its end."""

    def __init__(
        self, sandbox: Sandbox, limits: Limits, stdin_fd: int, stdout_fd: int, cpu_limit_s: float | None
    ):
        self._sandbox = sandbox
        self.limits = limits
        self._cpu_limit_s = cpu_limit_s
        self._in: int | None = stdin_fd
        self._out: int | None = stdout_fd
        os.set_blocking(stdin_fd, False)
        os.set_blocking(stdout_fd, False)
        self._pending = bytearray()
        self._buf = bytearray()
        self._result: LauncherResult | None = None  # the launcher's report of its end
        self._ended: RunOutcome | None = None
        self._usage = TreeUsage()
        self._started = time.monotonic()
        self._released = False
        self._frozen = False  # by the sandbox cgroup's freezer, between its turns
        #: the cgroup's freezer and CPU counter held open (opened at first use, closed on release)
        self._switch: TurnSwitch | None = None
        self._cgroup_cpu_ms = 0.0  # the counter's last reading: cpu_ms never goes back at the end
        #: a move's first tree sample: later where the cgroup counts and caps (sampler.py)
        self._first_sample_s = FIRST_SAMPLE_S if sandbox.cgroup is None else CGROUP_FIRST_SAMPLE_S

    # -- InteractiveProcess --------------------------------------------------------

    def send(self, text: str) -> None:
        if self._ended is not None or self._in is None:
            return  # the next read_line reports why
        self._thaw()
        self._pending += text.encode()
        self._flush()

    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        line = self._next_line(timeout_s, pause=pause, stop=True)
        assert line is not None  # stop: a deadline ends in a RunOutcome
        return line

    def wait_line(self, timeout_s: float) -> str | RunOutcome | None:
        return self._next_line(timeout_s, pause=False, stop=False)

    def _next_line(self, timeout_s: float, *, pause: bool, stop: bool) -> str | RunOutcome | None:
        if self._ended is not None:
            return self._ended
        if self._released:
            raise HostError("read from a persistent process after it was closed")
        self._thaw()
        line = self._take_line()
        if line is not None:  # already read with an earlier line: most of an engine's lines
            if pause:
                self._freeze()
            return line
        deadline = time.monotonic() + max(0.0, timeout_s)
        next_sample = time.monotonic() + self._first_sample_s
        watch: TreeWatch | None = None  # made when a sample is due: most lines come before
        cap = self.limits.output_kb * 1024
        chan = self._sandbox.channel
        while True:
            line = self._take_line()
            if line is not None:
                if pause:
                    self._freeze()  # it answered: nothing of it runs on the opponent's time
                return line
            if len(self._buf) > cap:
                return self._stop(output_over=True)  # a line longer than the output cap
            if self._result is not None:
                return self._finish_exited()
            now = time.monotonic()
            if now >= deadline:
                self._read_stdout()  # what is already in the pipe counts: read it before judging
                line = self._take_line()
                if line is not None:
                    if pause:
                        self._freeze()
                    return line
                if not stop:
                    return None
                return self._stop(timed_out=True, wall_limit_s=timeout_s)
            if now >= next_sample:
                began = now
                watch = watch or self._watch()
                over = watch.sample()
                self._usage = watch.usage
                if (over == "cpu" and self._cpu_limit_s is not None) or over == "memory":
                    return self._stop(stopped_for=over)
                now = time.monotonic()
                next_sample = now + watch.next_interval(now - began)
            if chan.has_message():
                self._on_message(chan.recv(0))
                continue
            poller = select.poll()
            if self._out is not None:
                poller.register(self._out, select.POLLIN)
            if self._in is not None and self._pending:
                poller.register(self._in, select.POLLOUT)
            poller.register(chan.fileno(), select.POLLIN)
            wait_s = min(deadline, next_sample) - now
            for fd, _ in poller.poll(max(1, int(wait_s * 1000) + 1)):
                if fd == self._out:
                    self._read_stdout()
                elif fd == self._in:
                    self._flush()
                else:
                    try:
                        self._on_message(chan.recv(0))
                    except ChannelClosed as e:
                        killed = self._sandbox.oom_outcome(self.limits, time.monotonic() - self._started)
                        if killed is None:
                            raise HostError(str(e)) from e
                        self._ended = killed  # the OOM killer took the launcher too
                        self.release()
                        self._sandbox.close()
                        return killed

    @property
    def cpu_ms(self) -> float:
        if self._result is not None:
            return max(self._result.cpu_us / 1000.0, self._usage.cpu_ms, self._cgroup_cpu_ms)
        if self._ended is not None or self._released:
            return max(self._usage.cpu_ms, self._cgroup_cpu_ms)
        switch = self._turn_switch()
        if switch is not None:  # the kernel's count: one read, where psutil walks the tree
            try:
                self._cgroup_cpu_ms = switch.cpu_ms()
            except OSError as e:
                raise HostError(f"cannot read a persistent entry's CPU time: {e}") from e
            return self._cgroup_cpu_ms
        self._watch().sample()
        return self._usage.cpu_ms

    def pause(self) -> None:
        if self._ended is None and not self._released:
            self._freeze()

    def close(self) -> None:
        self.release()

    # -- inside ----------------------------------------------------------------------

    def _turn_switch(self) -> TurnSwitch | None:
        """The cgroup's per-turn controls (workers/sandbox/turn_switch.py), None without a cgroup."""
        cgroup = self._sandbox.cgroup
        if cgroup is None or self._released:
            return None
        if self._switch is None:
            try:
                self._switch = TurnSwitch(cgroup.turn_files())
            except OSError as e:
                raise HostError(f"cannot open a persistent entry's cgroup controls: {e}") from e
        return self._switch

    def _freeze(self) -> None:
        """Stop the entry's processes (cgroup freezer) until it is spoken to again."""
        if self._frozen or (switch := self._turn_switch()) is None:
            return
        try:
            switch.freeze()
        except OSError as e:
            raise HostError(f"cannot freeze a persistent entry between its turns: {e}") from e
        self._frozen = True

    def _thaw(self) -> None:
        if not self._frozen or (switch := self._turn_switch()) is None:
            return
        try:
            switch.thaw()
        except OSError as e:
            raise HostError(f"cannot thaw a persistent entry for its turn: {e}") from e
        self._frozen = False

    def _watch(self) -> TreeWatch:
        watch = TreeWatch(
            self._sandbox.pid,
            cpu_limit_ms=self._cpu_limit_s * 1000.0 if self._cpu_limit_s is not None else None,
            memory_limit_kb=self.limits.memory_mb * 1024,
            skip_children=True,
        )
        watch.usage = self._usage
        return watch

    def _flush(self) -> None:
        while self._pending and self._in is not None:
            try:
                n = os.write(self._in, self._pending)
            except BlockingIOError:
                return
            except OSError:
                self._pending.clear()  # it closed its stdin or died: read_line will see
                return
            del self._pending[:n]

    def _read_stdout(self) -> None:
        if self._out is None:
            return
        try:
            data = os.read(self._out, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._buf += data
        else:  # closed its stdout; it may still be running (then: timeout)
            os.close(self._out)
            self._out = None

    def _on_message(self, msg: tuple[int, bytes] | None) -> None:
        if msg is None:
            return
        op, body = msg
        if op == REPLY_RESULT:
            self._result = LauncherResult.unpack(body)
            # a final answer written just before exiting still counts
            for _ in range(64):
                before = len(self._buf)
                self._read_stdout()
                if len(self._buf) == before:
                    break

    def _take_line(self) -> str | None:
        return take_line(self._buf)

    def _finish_exited(self) -> RunOutcome:
        result = self._result
        assert result is not None
        self._sandbox.charge_cgroup(self._usage)
        ended = judged(
            measure(result, self._usage), result.stdout, self.limits, cpu_limit_s=self._cpu_limit_s
        )
        if ended.failure is None and not ended.detail:
            # exited cleanly in the middle of a game: the protocol decides (no_output)
            ended = dataclasses.replace(ended, detail="exited with code 0 before answering")
        self._ended = ended
        self.release()
        return self._ended

    def _stop(
        self,
        *,
        timed_out: bool = False,
        output_over: bool = False,
        stopped_for: StopReason | None = None,
        wall_limit_s: float | None = None,
    ) -> RunOutcome:
        """Kill the process for what the host saw it do mid-turn; ``classify`` names the verdict."""
        self._kill()
        result = self._result
        if result is None:  # the launcher's report of the end did not come
            usage = self._usage
            wall_ms = (time.monotonic() - self._started) * 1000.0
            measured = Measurement(
                exit_code=None, wall_ms=wall_ms, cpu_ms=usage.cpu_ms, tree_rss_kb=usage.peak_rss_kb,
                peak_processes=usage.peak_processes,
            )  # fmt: skip
            stdout = bytes(self._buf)
        else:
            measured, stdout = measure(result, self._usage), result.stdout
        measured = dataclasses.replace(
            measured, timed_out=timed_out, output_over=output_over, stopped_for=stopped_for
        )
        self._ended = judged(
            measured, stdout, self.limits, cpu_limit_s=self._cpu_limit_s, wall_limit_s=wall_limit_s
        )
        self.release()
        return self._ended

    def _kill(self) -> None:
        """Have the launcher kill the process tree; collect its final report."""
        if self._released or self._sandbox.closed:
            return
        chan = self._sandbox.channel
        try:
            with contextlib.suppress(HostError):
                self._thaw()  # a frozen process cannot die
            chan.send(OP_KILL)
            while True:
                msg = chan.recv(START_TIMEOUT_S)
                if msg is None:
                    raise HostError("sandbox launcher did not confirm the kill")
                if msg[0] == REPLY_OK:
                    return
                self._on_message(msg)
        except HostError:
            self._sandbox.close()  # kills everything in it

    def release(self) -> None:
        """Kill the process (if it still runs) and give the launcher back to the host."""
        if self._released:
            return
        if self._result is None or self._ended is None:
            self._kill()
        self._released = True
        if self._switch is not None:
            self._switch.close()
            self._switch = None
        for fd in (self._in, self._out):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._in = self._out = None
        if self._sandbox.active is self:
            self._sandbox.active = None
