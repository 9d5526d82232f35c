"""The sandbox as a trust boundary (issue 10): what an entry can see, pin,
compute on the opponent's time, and make its build or its text do.

Real sandboxes, real cgroups (the version in use is printed: run with -s),
real builds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.domain.inert import escape_each, inert
from runner.domain.match_values import Limits, VerdictKind
from runner.domain.registry import SANDBOX_BINDS_ENV
from tests import forked_cli
from workers.artifacts import ArtifactCache, BuildFailed, local_fetch
from workers.sandbox.base import (
    EntryHost,
    HostError,
    HostFactory,
    RunOutcome,
    WrappedHost,
)
from workers.sandbox.cgroups import PREFIX, Cgroups, SandboxCgroup, process_start_time, shared_cgroups

from .conftest import FAULTY, FIXTURES, ROOT, STEADY, Recorder, entry_ref, faulty_copy, play

#: what the allow-list shows at the sandbox's root (some are absent on some systems)
ALLOWED_ROOT = {
    *("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc"),
    *("entry", "tmp", "dev", "proc", "run", ".tourney"),
}
CPU_STEADY = Path(__file__).resolve().parent / "fixtures" / "cpu-steady"


def needs_cgroups() -> Cgroups:
    cgroups = shared_cgroups()
    if cgroups.version is None:
        pytest.skip(f"no cgroups here: {cgroups.problem}")
    print(f"\n[cgroups in use: {cgroups.version}]")
    return cgroups


def our_cgroup_dirs() -> list[Path]:
    """Every sandbox cgroup this worker process has left behind."""
    cgroups = shared_cgroups()
    stem = f"{PREFIX}{os.getpid()}-"
    parents = [p for p in (cgroups._v2_parent, *cgroups._v1_parents.values()) if p is not None]
    return [d for parent in parents for d in parent.iterdir() if d.name.startswith(stem)]


# -- 1. the allow-list file system ----------------------------------------------------


def test_sandbox_shows_only_the_runtime_directories(bwrap_factory: HostFactory, tmp_path: Path) -> None:
    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / "mine.txt").write_text("mine\n")
    hidden = [str(ROOT), str(ROOT / "entries"), str(tmp_path), "/root", "/home", "/var", "/opt", "/srv"]
    script = (
        "import os\n"
        "print(' '.join(sorted(os.listdir('/'))))\n"
        f"for p in {hidden!r}:\n"
        "    print(p, os.path.exists(p))\n"
        "try:\n"
        "    print('shadow', repr(open('/etc/shadow').read()[:10]))\n"
        "except OSError as e:\n"
        "    print('shadow', 'unreadable')\n"
        "print('own', open('mine.txt').read().strip())\n"
    )
    with bwrap_factory.open(entry, Limits(move_wall_s=10.0), "A") as host:
        out = host.run(["python3", "-c", script], b"", Limits(move_wall_s=10.0))
    assert out.failure is None and out.exit_code == 0, out.stderr_tail
    lines = out.stdout.decode().splitlines()
    assert set(lines[0].split()) <= ALLOWED_ROOT, lines[0]
    assert all(line.endswith("False") for line in lines[1:-2]), lines
    assert lines[-2] in ("shadow unreadable", "shadow ''"), lines[-2]
    assert lines[-1] == "own mine"


def test_a_bind_the_worker_allows_is_shown_read_only(
    bwrap_factory: HostFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sandbox_binds`` / ``--sandbox-bind``: a runtime under /opt is visible, read-only."""
    from workers.sandbox.bwrap import BwrapHostFactory

    runtime = Path(tempfile.mkdtemp(prefix="tourney-bind-test-", dir="/opt"))
    try:
        runtime.chmod(0o755)  # world-readable, like an installed runtime
        (runtime / "lib.txt").write_text("runtime\n")
        monkeypatch.setenv(SANDBOX_BINDS_ENV, str(runtime))
        entry = tmp_path / "entry"
        entry.mkdir()
        script = (
            f"print(open('{runtime}/lib.txt').read().strip())\n"
            "try:\n"
            f"    open('{runtime}/new.txt', 'w')\n"
            "    print('writable')\n"
            "except OSError:\n"
            "    print('read-only')\n"
        )
        limits = Limits(move_wall_s=10.0)
        with BwrapHostFactory().open(entry, limits, "A") as host:
            out = host.run(["python3", "-c", script], b"", limits)
        assert out.failure is None, out.stderr_tail
        assert out.stdout.decode().split() == ["runtime", "read-only"]
        assert not (runtime / "new.txt").exists()
        # a path entries must never see is refused by the worker, whatever asks for it
        monkeypatch.setenv(SANDBOX_BINDS_ENV, "/root")
        with pytest.raises(HostError, match="never see"):
            BwrapHostFactory()
    finally:
        shutil.rmtree(runtime)


def test_builds_see_only_the_runtime_directories(bwrap_factory: HostFactory, tmp_path: Path) -> None:
    entry = tmp_path / "entry"
    entry.mkdir()
    outcome = bwrap_factory.run_build(
        entry, f"ls / > seen.txt; test -e {ROOT} && echo LEAK >> seen.txt; exit 0", Limits()
    )
    assert outcome.exit_code == 0, outcome
    seen = (entry / "seen.txt").read_text().split()
    assert set(seen) <= ALLOWED_ROOT, seen


# -- 2. a cgroup per sandbox ---------------------------------------------------------------


def test_each_sandbox_has_its_own_cgroup_removed_on_close(bwrap_factory: HostFactory, tmp_path: Path) -> None:
    needs_cgroups()
    entry = tmp_path / "entry"
    entry.mkdir()
    before = set(our_cgroup_dirs())
    hosts = [bwrap_factory.open(entry, Limits(), "A"), bwrap_factory.open(entry, Limits(), "B")]
    try:
        groups = []
        for host in hosts:
            pid = host.launcher_pid  # type: ignore[attr-defined]
            text = Path(f"/proc/{pid}/cgroup").read_text()
            groups.append({line.split(":")[2] for line in text.splitlines() if PREFIX in line})
        assert all(g for g in groups) and groups[0].isdisjoint(groups[1]), groups
        assert len(set(our_cgroup_dirs()) - before) >= 2
    finally:
        for host in hosts:
            host.close()
    assert set(our_cgroup_dirs()) <= before


def test_stale_cgroups_of_dead_workers_are_swept_live_ones_kept(tmp_path: Path) -> None:
    cgroups = needs_cgroups()
    dead = subprocess.Popen(["true"])
    dead.wait()
    parent = cgroups._v2_parent or cgroups._v1_parents["pids"]
    mine = process_start_time(os.getpid())
    names = {
        "dead": f"{PREFIX}{dead.pid}-1-0",  # its pid is free (or reused: the start time differs)
        "reused": f"{PREFIX}{os.getpid()}-{(mine or 0) + 1}-0",  # our pid, another start time
        "live": f"{PREFIX}{os.getpid()}-{mine}-999999",  # ours: never swept
    }
    for name in names.values():
        (parent / name).mkdir()
    try:
        removed = cgroups.sweep()
        assert names["dead"] in removed and names["reused"] in removed
        assert not (parent / names["dead"]).exists() and not (parent / names["reused"]).exists()
        assert (parent / names["live"]).exists()
    finally:
        for name in names.values():
            if (parent / name).exists():
                (parent / name).rmdir()


class MemAvailable(threading.Thread):
    """The least MemAvailable seen while it runs (sampled every 5 ms)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.start_kb = self.read()
        self.least_kb = self.start_kb
        self.stop = threading.Event()

    @staticmethod
    def read() -> int:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
        raise AssertionError("no MemAvailable")

    def run(self) -> None:
        while not self.stop.wait(0.005):
            self.least_kb = min(self.least_kb, self.read())

    @property
    def fell_mb(self) -> float:
        return (self.start_kb - self.least_kb) / 1024


# watches the machine's MemAvailable: only meaningful with no other test allocating beside it
@pytest.mark.integration
@pytest.mark.parametrize("hoarder", ["shm-hoarder", "memfd-hoarder", "tmpfs-hoarder"])
def test_hoarder_cannot_take_the_machines_memory(
    hoarder: str, recorder: Recorder, build_cache: ArtifactCache, tmp_path: Path
) -> None:
    """Trying to pin 1 GB that no process maps against memory_mb 256: memory_limit
    (or a refused allocation), and MemAvailable never falls by the gigabyte."""
    cgroups = needs_cgroups()
    limits = Limits(move_wall_s=20.0, memory_mb=256)
    watch = MemAvailable()
    watch.start()
    try:
        result = play(recorder, build_cache, [("faulty", faulty_copy(hoarder, tmp_path)), ("steady", STEADY)],
                      limits=limits)  # fmt: skip
    finally:
        watch.stop.set()
        watch.join()
    (game,) = result.games
    print(
        f"\n[{hoarder}: {game.verdict.kind.value} ({game.verdict.detail}); MemAvailable fell by at most "
        f"{watch.fell_mb:.0f} MiB with memory_mb 256 ({cgroups.version})]"
    )
    assert game.verdict.player == "faulty"
    assert game.verdict.kind in (VerdictKind.MEMORY_LIMIT, VerdictKind.CRASH), game.verdict
    # the sandbox's limit (256 MiB + its files + 16 MiB) plus the machine's own noise
    assert watch.fell_mb < 700, watch.fell_mb


# -- 4. nobody computes on the opponent's time -------------------------------------------


class OpponentsTurns(HostFactory):
    """Opens sandboxes through ``inner`` and reads, around every move of any other entry, the
    CPU the kernel has counted for the sandbox of the entry that has the file ``watched``
    (its cgroup's CPU accounting): what that entry computed on the others' time."""

    name = "bwrap"

    def __init__(self, inner: HostFactory, watched: str) -> None:
        self.inner, self.watched = inner, watched
        self.live: list[EntryHost] = []  # the watched entry's open sandboxes
        self.during_ms: list[float] = []  # its CPU during each move of another entry

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        host = self.inner.open(entry_dir, limits, mark)
        return _Watched(host, self) if (entry_dir / self.watched).exists() else _Opponent(host, self)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        return self.inner.run_build(entry_dir, command, limits)

    def watched_cpu_ms(self) -> float:
        return sum(_cgroup(h).usage().cpu_us for h in self.live) / 1000


def _cgroup(host: EntryHost) -> SandboxCgroup:
    inner: Any = getattr(host, "inner", host)  # under the Recorder's wrapper (a bwrap host)
    cgroup: SandboxCgroup = inner._sandbox.cgroup
    return cgroup


class _Passing(WrappedHost):
    def __init__(self, host: EntryHost, turns: OpponentsTurns) -> None:
        super().__init__(host)
        self.turns = turns


class _Watched(_Passing):
    def __init__(self, host: EntryHost, turns: OpponentsTurns) -> None:
        super().__init__(host, turns)
        turns.live.append(host)

    def close(self) -> None:
        self.turns.live.remove(self.inner)
        super().close()


class _Opponent(_Passing):
    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        before = self.turns.watched_cpu_ms()
        try:
            return super().run(argv, stdin, limits)
        finally:
            self.turns.during_ms.append(self.turns.watched_cpu_ms() - before)


@pytest.mark.integration
def test_busy_children_are_frozen_between_turns(recorder: Recorder, build_cache: ArtifactCache) -> None:
    """A gomocup brain keeps 20 busy children (each its own session) for the whole game; its
    opponent needs 0.3 s of CPU a move. The kernel's count shows the brain's sandbox computes
    nothing while the opponent moves, and the opponent is never the one a verdict names.

    A move's wall limit is wall time, so on a machine loaded by others 0.3 s of CPU may take
    more than a second whatever the brain does (docs/config.md, `timing`): the wall limit
    here leaves room for that, and the proof is the CPU count, which load does not change
    (unfrozen, 20 spinning children take most of the CPU they can get on any machine)."""
    needs_cgroups()
    turns = OpponentsTurns(recorder, watched="brain.py")
    seats = [("busy", FAULTY / "busy-children"), ("cpu-steady", CPU_STEADY)]
    result = play(
        turns, build_cache, seats, limits=Limits(move_wall_s=20.0, move_cpu_s=1.0), game="mnk",
        board="4 4 4", orders=[["busy", "cpu-steady"], ["cpu-steady", "busy"]],
    )  # fmt: skip
    for g in result.games:
        assert g.verdict.player != "cpu-steady", g.verdict
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
        assert sum(1 for m in g.moves if m.player == "cpu-steady") >= 3
    steady_moves = sum(1 for g in result.games for m in g.moves if m.player == "cpu-steady")
    assert len(turns.during_ms) == steady_moves  # every opponent move was watched
    # frozen: a few ms of the kernel's rounding at most, against seconds unfrozen
    print(f"\n[busy-children: {sum(turns.during_ms):.1f} ms CPU during {steady_moves} opponent moves]")
    assert sum(turns.during_ms) < 50, turns.during_ms


def test_a_persistent_entry_uses_no_cpu_between_its_turns(bwrap_factory: HostFactory) -> None:
    """The kernel's own count: the busy-children brain's sandbox uses next to no CPU
    while it waits (frozen), and a lot as soon as it is spoken to (thawed)."""
    needs_cgroups()
    limits = Limits(move_wall_s=10.0)
    with bwrap_factory.open(FAULTY / "busy-children", limits, "X") as host:
        cgroup = host._sandbox.cgroup  # type: ignore[attr-defined]
        brain = host.spawn(["python3", "-u", "brain.py"], limits)
        brain.send("START 4\n")
        assert brain.read_line(10.0) == "OK"  # answered: frozen from here
        before = cgroup.usage().cpu_us
        time.sleep(1.0)
        waiting_ms = (cgroup.usage().cpu_us - before) / 1000
        brain.send("INFO timeout_turn 1000\n")  # spoken to (no answer expected): thawed
        before = cgroup.usage().cpu_us
        time.sleep(0.5)
        thawed_ms = (cgroup.usage().cpu_us - before) / 1000
        brain.close()
    print(f"\n[busy-children: {waiting_ms:.0f} ms CPU in 1 s frozen, {thawed_ms:.0f} ms in 0.5 s thawed]")
    assert waiting_ms < 50, waiting_ms
    assert thawed_ms > 100, thawed_ms


# -- 5. a build is the entry's own business ------------------------------------------------


def _tiny_entry(tmp_path: Path, name: str, build: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "junk.txt").write_text("junk\n")
    (d / "main.py").write_text("import sys\nsys.stdout.write(sys.stdin.read())\n")
    (d / "entry.yaml").write_text(
        f"name: {name}\ngame: boxing\nprotocol: potm-arena\nbuild: {build!r}\nrun: [python3, main.py]\n"
    )
    return d


def test_hostile_build_is_build_failed_and_cached(bwrap_factory: HostFactory, tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path / "cache", bwrap_factory)
    ref = entry_ref(FAULTY / "hostile-build")
    fetch = local_fetch({ref.digest: FAULTY / "hostile-build"})
    first = cache.ensure(ref, fetch)
    assert isinstance(first, BuildFailed), first
    assert "\n" not in first.detail and "No space left on device" in first.detail, first.detail
    again = cache.ensure(ref, fetch)
    assert again == first and cache.builds == 1


@pytest.mark.parametrize(
    ("build", "why"),
    [
        ("mkfifo trap", "trap is not a regular file"),
        ("mkdir -p d && chmod 000 d && touch t && chmod 000 t", None),  # root reads it all: ready
    ],
)
def test_unusable_build_output_is_build_failed(
    bwrap_factory: HostFactory, tmp_path: Path, build: str, why: str | None
) -> None:
    entry = _tiny_entry(tmp_path, "odd-output", build)
    ref = entry_ref(entry)
    done = ArtifactCache(tmp_path / "cache", bwrap_factory).ensure(ref, local_fetch({ref.digest: entry}))
    if why is None:
        assert isinstance(done, Path), done
    else:
        assert isinstance(done, BuildFailed) and why in done.detail, done


def test_build_replacing_a_file_by_a_directory_is_taken_as_built(
    bwrap_factory: HostFactory, tmp_path: Path
) -> None:
    entry = _tiny_entry(tmp_path, "replacer", "rm junk.txt && mkdir junk.txt && echo x > junk.txt/inner")
    ref = entry_ref(entry)
    done = ArtifactCache(tmp_path / "cache", bwrap_factory).ensure(ref, local_fetch({ref.digest: entry}))
    assert isinstance(done, Path), done
    assert (done / "junk.txt" / "inner").read_text() == "x\n"


# -- 6. entry text is inert ----------------------------------------------------------------


def test_inert_escapes_control_and_format_characters() -> None:
    raw = "err \x1b]0;PWNED\x07\x1b[2J\rover\u202eevil\x9b tab\tok\nline2"
    assert inert(raw) == "err \\x1b]0;PWNED\\x07\\x1b[2J\\x0dover\\u202eevil\\x9b tab\tok\nline2"
    assert "\n" not in inert(raw, one_line=True)
    assert inert("plain text, ünïcode ✓") == "plain text, ünïcode ✓"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x3000)), st.booleans())
def test_inerts_fast_path_agrees_with_escaping_each_character(text: str, one_line: bool) -> None:
    assert inert(text, one_line=one_line) == escape_each(text, one_line=one_line)
    assert inert(text + "\x1b", one_line=one_line) == escape_each(text, one_line=one_line) + "\\x1b"


def test_terminal_escapes_are_inert_in_tourney_play(tmp_path: Path) -> None:
    env = {**os.environ, "TOURNEY_CACHE_DIR": str(tmp_path / "cache")}
    proc = forked_cli.run(
        [sys.executable, "-m", "runner.cli", "play", "--game", "boxing",
         str(FAULTY / "terminal-escapes"), str(FIXTURES.parent / "sandbox" / "fixtures" / "steady")],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    text = proc.stdout + proc.stderr
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text, text
    assert "\\x1b]0;PWNED\\x07" in text, text
    assert "Traceback" not in text, text


def test_no_cgroup_is_left_behind() -> None:
    if shared_cgroups().version is None:
        pytest.skip("no cgroups here")
    assert our_cgroup_dirs() == []
