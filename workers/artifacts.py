"""Entry artifacts on a worker: fetch by digest, verify, build once, cache.

Layout of the cache (one directory per entry digest)::

    <root>/<digest>/entry/        the unpacked, built entry (games copy it)
    <root>/<digest>/build.log     the build command's output
    <root>/<digest>/ready         marker: built fine
    <root>/<digest>/build_failed  marker instead: one-line reason (a failed build, or a
                                  bench that disagrees with entry.yaml's ``bench:``)
    <root>/<digest>.lock          flock'd while someone prepares the digest
    <root>/<digest>-<h>/ ...      the same for a build command with placeholders
                                  (``{size}``...): one build per expanded command,
                                  ``<h>`` a hash of it (``cache_key``)

A digest directory appears by one ``rename`` of a finished temporary
directory, so readers never see half an entry, and the flock makes
concurrent ``ensure`` calls for one digest (several worker processes on one
machine) build it once. A failed build is cached like a good one: the same
code fails the same way, and every game of its matches is charged
``build_failed`` without building again.

The digest is checked on the unpacked files *before* building (the build
adds files), so a corrupt or substituted artifact never runs.

Whose fault (docs/config.md#builds): whatever goes wrong while fetching,
unpacking, checking or building one entry's artifact, or copying its build
out, is that entry's ``build_failed`` with the reason in one line (an
artifact that does not unpack or match its digest, the organiser's refusal
standing for an entry it could not pack, names too long for this disk ...),
unless this machine shows the fault is its own: its disk or quota full, its
cache unwritable, the broker unreachable, its sandbox failing. Then it is an
``ArtifactError`` naming the entry's digest, a ``system_error`` the
coordinator retries elsewhere and counts against this worker at most once in
a row for that entry (``runner.orchestration.workers_health``): one entry's
artifact never quarantines a worker. A cache that cannot be made at all (its
root not a directory: ``CacheUnusable``) fails every entry alike: that fault
names no entry and counts in full. A fault found before the build (fetch,
unpack, digest) is not cached: the next match tries again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from runner.domain.bench import BENCH_ARG, bad_bench
from runner.domain.match_values import EntryRef, Limits, VerdictKind
from runner.domain.packing import artifact_refusal, directory_digest, pack_entry, unpack_entry
from runner.domain.placeholders import ContestParams, fill_build
from runner.errors import EntryFault, RetryElsewhere
from workers.sandbox.base import HostFactory, RunOutcome
from workers.sandbox.build_output import machine_fault
from workers.sandbox.limits import build_limits

log = logging.getLogger("tourney.artifacts")

#: a digest is hex sha256; anything else must not become a path
_HEX = frozenset("0123456789abcdef")


class ArtifactError(RetryElsewhere, RuntimeError):
    """This machine could not prepare an entry's artifact through a fault of its own (its disk,
    its cache, the broker, its sandbox); ``digest`` names the entry when there is one."""

    def __init__(self, message: str, digest: str = "") -> None:
        super().__init__(message)
        self.digest = digest


class CacheUnusable(ArtifactError):
    """This machine's artifact cache itself cannot be used (its root is not a directory it can
    make and write): every entry fails here alike, so the fault names no entry and counts
    against this worker in full (``runner.orchestration.workers_health``)."""


class ArtifactRefused(EntryFault):
    """An entry's artifact that cannot become a built entry, through no fault of this machine:
    the entry's ``build_failed`` (not cached: the next match tries again)."""


@dataclass(frozen=True)
class BuildFailed:
    """An entry whose build failed: stands in for its directory in a match."""

    digest: str
    detail: str  # one line, e.g. "exit code 1: main.c:3: error: ..."
    log: str = ""


#: what a match gets for each entry: the built directory, or why there is none
EntryDir = Path | BuildFailed


def _check_digest(digest: str) -> None:
    """A cache key: a hex sha256 digest, or one with ``-`` and 16 hex digits (``cache_key``)."""
    base, dash, suffix = digest.partition("-")
    plain = len(base) == 64 and set(base) <= _HEX
    if not plain or (dash and (len(suffix) != 16 or not set(suffix) <= _HEX)):
        raise ArtifactError(f"not a sha256 digest: {digest!r}")


def build_command(ref: EntryRef, params: ContestParams | None) -> str | None:
    """The build command to run for ``ref``: its placeholders filled from ``params``."""
    if not ref.build or params is None:
        return ref.build
    return fill_build(ref.build, params)


def cache_key(ref: EntryRef, params: ContestParams | None = None) -> str:
    """Where ``ref``'s build is cached: its digest, or, when its build command holds placeholders,
    its digest and a hash of the expanded command (so each board size gets its own build)."""
    command = build_command(ref, params)
    if command == ref.build:
        return ref.digest
    return f"{ref.digest}-{hashlib.sha256((command or '').encode()).hexdigest()[:16]}"


def _build_log(command: str, outcome: RunOutcome) -> str:
    status = f"exit code {outcome.exit_code}" if outcome.exit_code is not None else f"signal {outcome.signal}"
    parts = [
        f"$ {command}",
        outcome.stdout.decode("utf-8", errors="replace"),
        outcome.stderr_tail.decode("utf-8", errors="replace"),
        f"[{status}; {outcome.wall_ms / 1000.0:.1f} s{'; ' + outcome.detail if outcome.detail else ''}]",
    ]
    return "\n".join(p.rstrip("\n") for p in parts if p) + "\n"


ERROR_LIKE = re.compile(
    r"\b(error|fatal|undefined reference|cannot|not found|no such file|failed)\b", re.IGNORECASE
)
ERROR_LINES_SHOWN = 5


def error_lines(text: str, most: int = ERROR_LINES_SHOWN) -> list[str]:
    """The first lines of a build log that look like errors (a compiler's first complaint is the
    cause; its last is often a consequence such as 'N errors generated')."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("$ ")]
    return [ln[:200] for ln in lines if ERROR_LIKE.search(ln)][:most]


def _failure_line(outcome: RunOutcome, log_path: Path | None = None) -> str:
    """One line for the verdict: what broke, the compiler's first error-like lines (else its last
    line), and where the full build log is."""
    failure = outcome.failure
    if failure is not None and failure is not VerdictKind.CRASH:
        why = f"{failure.value}: {outcome.detail}" if outcome.detail else failure.value
    elif outcome.signal is not None:
        why = f"signal {outcome.signal}"
    elif outcome.exit_code is not None:
        why = f"exit code {outcome.exit_code}"
    else:
        why = outcome.detail or "the build did not run"
    text = "\n".join(b.decode("utf-8", errors="replace") for b in (outcome.stdout, outcome.stderr_tail))
    found = error_lines(text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if found:
        why = f"{why}: {' | '.join(found)}"
    elif lines:
        why = f"{why}: {lines[-1][:160]}"
    if log_path is not None:
        # the path is on the machine that built it; the log also travels back with the match
        # result (``MatchResult.build_logs``), so the organiser's machine can print it
        why = f"{why} (full log: tourney build-log RUN ENTRY; on the worker {log_path})"
    return why


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class ArtifactCache:
    """Built entries by digest under ``root``, built with ``hosts.run_build``."""

    def __init__(self, root: Path, hosts: HostFactory, limits: Limits | None = None):
        self.root = root
        self.hosts = hosts
        self.limits = build_limits(limits)
        self.builds = 0  # builds this instance ran (for tests and logs)
        self.benches = 0  # bench checks it ran (entry.yaml ``bench:``)

    def cached(self, digest: str) -> EntryDir | None:
        """The ready entry or the cached failure for ``digest``; None when neither exists."""
        _check_digest(digest)
        d = self.root / digest
        if (d / "ready").exists():
            return d / "entry"
        failed = d / "build_failed"
        if failed.exists():
            log = d / "build.log"
            return BuildFailed(
                digest.partition("-")[0],
                failed.read_text().strip(),
                log.read_text(errors="replace") if log.exists() else "",
            )
        return None

    def ensure(
        self, ref: EntryRef, fetch: Callable[[str], bytes], params: ContestParams | None = None
    ) -> EntryDir:
        """The built entry directory for ``ref`` (or its ``BuildFailed``), fetching and
        building it first if this machine has not yet. ``fetch(digest)`` returns the
        packed tar.gz (``runner.domain.entries.pack_entry``); ``params`` fill the build
        command's placeholders (``runner.domain.placeholders``)."""
        key = cache_key(ref, params)
        try:
            return self._ensure(ref, fetch, params, key)
        except ArtifactRefused as e:
            log.warning("artifact of %s (%s) refused: %s", ref.name, ref.digest[:12], e)
            return BuildFailed(ref.digest, _one_line(str(e)))
        except CacheUnusable:
            raise  # no entry's: the same for every entry on this machine
        except ArtifactError as e:
            e.digest = e.digest or ref.digest
            raise
        except RetryElsewhere as e:  # the sandbox could not build here (HostError): this machine's
            raise ArtifactError(f"{ref.name}: {e}", ref.digest) from e
        except OSError as e:
            if machine_fault(e, self.root):
                raise ArtifactError(f"{ref.name}: this machine cannot prepare it: {e}", ref.digest) from e
            log.warning("artifact of %s (%s) unusable: %s", ref.name, ref.digest[:12], e)
            return BuildFailed(ref.digest, _one_line(f"its artifact is unusable here: {e}"))
        except Exception as e:  # whatever else one entry's artifact makes go wrong is that entry's
            log.exception("artifact of %s (%s) unusable", ref.name, ref.digest[:12])
            return BuildFailed(ref.digest, _one_line(f"its artifact is unusable: {type(e).__name__}: {e}"))

    def _ensure(
        self, ref: EntryRef, fetch: Callable[[str], bytes], params: ContestParams | None, key: str
    ) -> EntryDir:
        done = self.cached(key)
        if done is not None:
            return done
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self.root.chmod(0o700)  # built entries: no other local user reads them
        except OSError as e:  # nothing of the entry touched yet: the cache is this machine's
            raise CacheUnusable(f"this machine's artifact cache {self.root} is unusable: {e}") from e
        # a plain digest keeps its old prefix; a keyed build's prefix names the key, so clearing
        # debris under this key's lock never touches another key's build of the same digest
        prefix = f".{key[:16]}{key[64:]}-"
        with _locked(self.root / f"{key}.lock"):
            done = self.cached(key)  # someone else built it while we waited
            if done is not None:
                return done
            final = self.root / key
            if final.exists():
                shutil.rmtree(final)  # no marker: debris of a crash, never published
            for debris in self.root.glob(f"{prefix}*"):
                shutil.rmtree(debris, ignore_errors=True)  # a build killed midway (we hold the lock)
            work = Path(tempfile.mkdtemp(prefix=prefix, dir=self.root))
            try:
                self._prepare(ref, fetch, work, key, build_command(ref, params))
                os.rename(work, final)
            finally:
                if work.exists():
                    shutil.rmtree(work, ignore_errors=True)
        done = self.cached(key)
        if done is None:
            raise ArtifactError(f"{ref.name}: cache entry {key[:12]} vanished after building")
        return done

    def ensure_all(
        self,
        entries: Mapping[str, EntryRef],
        fetch: Callable[[str], bytes],
        params: ContestParams | None = None,
    ) -> dict[str, EntryDir]:
        """``ensure`` for each entry of a match, keyed by entry name (variants share a build)."""
        return {name: self.ensure(ref, fetch, params) for name, ref in entries.items()}

    def _prepare(
        self, ref: EntryRef, fetch: Callable[[str], bytes], work: Path, key: str, command: str | None
    ) -> None:
        entry = work / "entry"
        try:
            blob = fetch(ref.digest)
        except (RetryElsewhere, ArtifactRefused):
            raise  # this machine's (the broker unreachable), or the entry's already
        except OSError as e:  # an inline run reads the run directory's artifacts
            if machine_fault(e, self.root):
                raise
            raise ArtifactRefused(f"cannot fetch its artifact {ref.digest[:12]}: {e}") from e
        except Exception as e:
            raise ArtifactRefused(f"cannot fetch its artifact {ref.digest[:12]}: {e}") from e
        refused = artifact_refusal(blob)
        if refused is not None:
            raise ArtifactRefused(refused)  # the organiser could not pack it (runner.storage.artifacts)
        try:
            unpack_entry(blob, entry)
        except Exception as e:
            if isinstance(e, OSError) and machine_fault(e, self.root):
                raise
            raise ArtifactRefused(f"its artifact {ref.digest[:12]} does not unpack here: {e}") from e
        got = directory_digest(entry)
        if got != ref.digest:
            raise ArtifactRefused(f"artifact digest mismatch: expected {ref.digest[:12]}, got {got[:12]}")
        ok = True
        if not command:
            (work / "build.log").write_text("(no build step)\n")
        else:
            outcome = self.hosts.run_build(entry, command, self.limits)
            self.builds += 1
            (work / "build.log").write_text(_build_log(command, outcome))
            ok = outcome.failure is None and outcome.exit_code == 0
            if not ok:
                log_path = self.root / key / "build.log"  # where it lands once published
                (work / "build_failed").write_text(_failure_line(outcome, log_path) + "\n")
            # one line per build in the builder's log (a worker's, or the coordinator's when it plays inline)
            log.info(
                "built %s (%s) in %.1fs: %s",
                ref.name,
                key[:12],
                outcome.wall_ms / 1000.0,
                "ok" if ok else "build_failed",
            )
        if ok and ref.bench is not None:
            problem = self._check_bench(ref, entry, work)
            if problem is not None:
                ok = False
                (work / "build_failed").write_text(problem + "\n")
        if ok:
            (work / "ready").write_text("")

    def _check_bench(self, ref: EntryRef, entry: Path, work: Path) -> str | None:
        """Run ``<program> bench`` in the sandbox on the built entry; the one line refusing it when
        the node count it prints is not ``ref.bench`` (``runner.domain.bench``), else None. Its
        output is added to the build log."""
        assert ref.bench is not None
        argv = [*ref.run, *ref.args, BENCH_ARG]
        with self.hosts.open(entry, self.limits, "bench") as host:
            outcome = host.run(argv, b"", self.limits)
        self.benches += 1
        with open(work / "build.log", "a") as f:
            f.write(_build_log(" ".join(argv), outcome))
        text = "\n".join(b.decode("utf-8", errors="replace") for b in (outcome.stdout, outcome.stderr_tail))
        problem = bad_bench(ref.bench, text)
        if problem is not None and outcome.failure is not None:
            problem += f" ({outcome.failure.value}{': ' + outcome.detail if outcome.detail else ''})"
        log.info("bench of %s: %s", ref.name, problem or f"{ref.bench} nodes, as declared")
        return problem


def _one_line(text: str, most: int = 500) -> str:
    return " ".join(text.split())[:most]


def local_fetch(paths: Mapping[str, Path]) -> Callable[[str], bytes]:
    """A ``fetch`` for entries on this machine: digest -> entry directory, packed on demand."""

    def fetch(digest: str) -> bytes:
        try:
            path = paths[digest]
        except KeyError:
            raise ArtifactError(f"no local entry directory has digest {digest[:12]}") from None
        return pack_entry(path)

    return fetch
