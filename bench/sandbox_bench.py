"""Sandbox benchmarks (docs/benchmarks.md): per-move overhead and time-limit precision.

Per-move overhead: the runner's wall time for one move through the sandbox
(``EntryHost.run``: request to the launcher, fork+exec inside the sandbox,
answer) divided by a bare ``subprocess.run`` of the same program with the
same input, measured in this process, interleaved (bare, sandboxed, bare,
...) so that both see the same machine; medians. The sandbox is set up once
per game, as in a match, so its setup is not part of a move (it is printed
separately, as moves per game it costs).

Time-limit precision: moves that overrun a wall-clock limit, with every core
kept busy by CPU burners; how far past the limit the runner has its answer
(a verdict, every process killed).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from runner.domain.games.boxing import Boxing
from runner.domain.match_values import Limits
from workers.sandbox.base import EntryHost
from workers.sandbox.bwrap import SANDBOX_ENV, BwrapHostFactory

ROOT = Path(__file__).resolve().parents[1]

#: the cheapest native boxing move there is (first fit): the worst case for the ratio
FIRST_FIT_C = r"""
#include <stdio.h>
int main(int argc, char **argv) {
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, stdin);
    char mark = argc > 1 ? argv[1][0] : 'A';
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '-') { buf[i] = mark; break; }
    fwrite(buf, 1, n, stdout);
    return 0;
}
"""
FIRST_FIT_PY = """import sys
arena = sys.stdin.read()
i = arena.find("-")
sys.stdout.write(arena if i < 0 else arena[:i] + sys.argv[1] + arena[i + 1:])
"""

#: the budget the issue sets for killing an overrunning move
KILL_BUDGET_MS = 100.0


def _median_ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000.0


def overhead_ratio(
    host: EntryHost, argv: list[str], cwd: Path, stdin: bytes, reps: int
) -> tuple[float, float, float]:
    """(ratio, bare median ms, sandboxed median ms) for ``reps`` interleaved moves.

    The bare run gets the sandbox's environment and the same working
    directory contents: the same program, input and environment; only the
    sandbox differs.
    """
    limits = Limits(move_wall_s=10.0)
    bare: list[float] = []
    boxed: list[float] = []
    for _ in range(3):  # warm both paths (page cache, the launcher's first fork)
        subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=SANDBOX_ENV, check=True)
        host.run(argv, stdin, limits)
    for _ in range(reps):
        t = time.perf_counter()
        want = subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=SANDBOX_ENV, check=True)
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        got = host.run(argv, stdin, limits)
        boxed.append(time.perf_counter() - t)
        if got.failure is not None or len(got.stdout) != len(want.stdout):
            raise RuntimeError(f"sandboxed move failed: {got.failure} {got.detail} {got.stderr_tail!r}")
    b, s = _median_ms(bare), _median_ms(boxed)
    return s / b, b, s


@contextlib.contextmanager
def burners(n: int) -> Iterator[None]:
    """``n`` processes spinning on the CPU until the block ends (stopped by pid)."""
    # each in its own session, so also in its own scheduler autogroup: as
    # heavy as n unrelated jobs, not one group of n processes
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(n)
    ]
    try:
        time.sleep(0.2)  # let them get going
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def overshoots(host: EntryHost, argv: list[str], limit_s: float, reps: int) -> list[float]:
    """Milliseconds past ``limit_s`` at which the runner had each overrunning move's verdict."""
    limits = Limits(move_wall_s=limit_s, move_cpu_s=60.0)  # the wall clock must be what stops it
    out: list[float] = []
    for _ in range(reps):
        t = time.perf_counter()
        got = host.run(argv, b"", limits)
        elapsed = time.perf_counter() - t
        if got.failure is None or got.failure.value != "timeout":
            raise RuntimeError(f"expected a timeout, got {got.failure} {got.detail}")
        out.append((elapsed - limit_s) * 1000.0)
    return out


def _open(factory: BwrapHostFactory, entry: Path) -> tuple[EntryHost, float]:
    t = time.perf_counter()
    host = factory.open(entry, Limits(), "A")
    return host, (time.perf_counter() - t) * 1000.0


def setup_costs(factory: BwrapHostFactory, entry: Path, reps: int) -> tuple[float, float]:
    """Median ms to open and close one game's sandbox, with its cgroup and without
    (the same factory told to make none), interleaved so load drifts hit both alike."""
    without = BwrapHostFactory()
    without._cgroup = lambda *_: None  # type: ignore[method-assign]  # rlimits only, for comparison
    with_ms: list[float] = []
    without_ms: list[float] = []
    for _ in range(reps):
        for f, into in ((factory, with_ms), (without, without_ms)):
            t = time.perf_counter()
            f.open(entry, Limits(), "A").close()
            into.append((time.perf_counter() - t) * 1000.0)
    return statistics.median(with_ms), statistics.median(without_ms)


def reused_setup_ms(factory: BwrapHostFactory, entry: Path, reps: int, between_s: float = 0.0) -> float:
    """Median ms a game's sandbox costs when it is reused (``workers.sandbox.pool``, as
    matches are played): open then close, back to back, so each open waits for the
    whole reset the previous close started (in a match it overlaps the game's end).

    Back to back, the launcher must also make each next game's namespaces (about a
    millisecond, launcher.c ``manage_games``) between two empty games; in a match it
    makes them while a game is played. ``between_s`` (untimed) between games shows that."""
    from workers.sandbox.pool import ReusingHostFactory, SandboxPool

    pooled = ReusingHostFactory(factory, SandboxPool(max_idle=2))
    try:
        pooled.open(entry, Limits(), "A").close()  # the one new sandbox
        times: list[float] = []
        for _ in range(reps):
            time.sleep(between_s)
            t = time.perf_counter()
            pooled.open(entry, Limits(), "A").close()
            times.append((time.perf_counter() - t) * 1000.0)
        if pooled.pool.reused < reps:
            raise RuntimeError(f"only {pooled.pool.reused} of {reps} games reused their sandbox")
        return statistics.median(times)
    finally:
        pooled.pool.close_all()


def _line(label: str, value: str) -> None:
    print(f"{label}: {value}", flush=True)


def _percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main(quick: bool = False) -> None:
    factory = BwrapHostFactory()
    arena = Boxing().default_board().encode()
    reps_native = 60 if quick else 300
    reps_python = 20 if quick else 100
    reps_kill = 5 if quick else 20
    work = Path(tempfile.mkdtemp(prefix="tourney-bench-"))
    try:
        native = work / "native"
        native.mkdir()
        (native / "main.c").write_text(FIRST_FIT_C)
        subprocess.run(["cc", "-O2", "-o", "a.out", "main.c"], cwd=native, check=True)
        host, _ = _open(factory, native)
        try:
            ratio, bare_ms, boxed_ms = overhead_ratio(host, ["./a.out", "A"], native, arena, reps_native)
        finally:
            host.close()
        _line("per-move overhead ratio (native, sandboxed)", f"{ratio:.3f}")
        _line(
            f"  native first-fit C, median of {reps_native} interleaved moves",
            f"bare {bare_ms:.3f} ms, sandboxed {boxed_ms:.3f} ms",
        )
        reused_ms = reused_setup_ms(factory, native, 20 if quick else 100)
        _line("per-game sandbox set-up cost", f"{reused_ms / bare_ms:.2f} bare moves")
        _line(
            "  reused sandbox (reset between games), median open+close",
            f"{reused_ms:.2f} ms; bare native move {bare_ms:.3f} ms",
        )
        spaced_ms = reused_setup_ms(factory, native, 20 if quick else 100, between_s=0.01)
        _line(
            "  the same, games 10 ms apart (the next game's namespaces made meanwhile, as in a match)",
            f"{spaced_ms / bare_ms:.2f} bare moves ({spaced_ms:.2f} ms)",
        )
        setup_ms, setup_plain_ms = setup_costs(factory, native, 5 if quick else 21)
        _line(
            "new sandbox per game (no reuse): setup+teardown, in bare native moves",
            f"{setup_ms / bare_ms:.1f}",
        )
        _line(
            f"  {factory.memory_mode}: median open+close {setup_ms:.1f} ms; without a cgroup "
            f"{setup_plain_ms:.1f} ms",
            f"cgroup cost ratio {setup_ms / setup_plain_ms:.2f}",
        )

        greedy = ROOT / "entries" / "boxing" / "greedy"
        if (greedy / "main.c").is_file():
            g = work / "greedy"
            shutil.copytree(greedy, g)
            subprocess.run(["cc", "-O2", "-o", "a.out", "main.c"], cwd=g, check=True)
            host, _ = _open(factory, g)
            try:
                ratio, bare_ms, boxed_ms = overhead_ratio(host, ["./a.out", "A"], g, arena, reps_native)
            finally:
                host.close()
            _line(
                "  entries/boxing/greedy (C) ratio",
                f"{ratio:.3f} (bare {bare_ms:.3f} ms, sandboxed {boxed_ms:.3f} ms)",
            )

        py = work / "python"
        sample = ROOT / "entries" / "boxing" / "random" / "main.py"
        py.mkdir()
        if sample.is_file():
            shutil.copy(sample, py / "main.py")
            which = "entries/boxing/random"
        else:
            (py / "main.py").write_text(FIRST_FIT_PY)
            which = "a first-fit player"
        # the same interpreter on both sides: the one the sandbox's PATH finds
        python = shutil.which("python3", path=SANDBOX_ENV["PATH"]) or "python3"
        argv = [python, "main.py", "A"]
        host, _ = _open(factory, py)
        try:
            ratio, bare_ms, boxed_ms = overhead_ratio(host, argv, py, arena, reps_python)
        finally:
            host.close()
        _line("per-move overhead ratio (python, sandboxed)", f"{ratio:.3f}")
        _line(
            f"  {which} ({python}), median of {reps_python} interleaved moves",
            f"bare {bare_ms:.3f} ms, sandboxed {boxed_ms:.3f} ms",
        )

        cores = os.cpu_count() or 1
        limit_s = 0.25
        host, _ = _open(factory, native)
        try:
            with burners(cores):
                sleep = overshoots(host, ["sleep", "30"], limit_s, reps_kill)
                spin = overshoots(host, ["sh", "-c", "while :; do :; done"], limit_s, reps_kill)
        finally:
            host.close()
        every = sleep + spin
        p50, worst = statistics.median(every), max(every)
        _line("time-limit overshoot p50/max (ms past limit)", f"{p50:.1f} / {worst:.1f}")
        _line(
            "  conditions",
            f"{cores} cores kept busy by {cores} CPU burners; {len(every)} overrunning moves, "
            f"{limit_s:g} s wall-clock limit",
        )
        _line(
            "  sleeping / spinning entries p50/max (ms)",
            f"{statistics.median(sleep):.1f} / {max(sleep):.1f}, "
            f"{statistics.median(spin):.1f} / {max(spin):.1f}",
        )
        _line(
            f"kill latency / {KILL_BUDGET_MS:.0f} ms budget",
            f"p50 {p50 / KILL_BUDGET_MS:.3f}, p95 {_percentile(every, 0.95) / KILL_BUDGET_MS:.3f}, "
            f"max {worst / KILL_BUDGET_MS:.3f}",
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
