"""The one way to play a match: a spec in, a ``MatchResult`` out.

Every caller plays through ``execute_match``: the Celery task
(``workers.tasks``), ``tourney play`` (``workers.play``), the inline
dispatcher behind ``tourney run --inline`` and ``tourney rerun``
(``runner.orchestration.inline_dispatcher.InlineDispatcher``), and the benchmarks and strength runs
of the sample entries. So a match is played the same way whoever asks:

1. the host factory for the spec's sandbox (``workers.sandbox.game_host_factory``:
   with bwrap, sandboxes reset and reused across games), unless the caller brings its own;
2. each entry's artifact, fetched by digest, checked and built once per digest
   in this machine's cache (``workers.artifacts.ArtifactCache``); a failed
   build is the entry's ``build_failed``, not an error;
3. the referee loop (``workers.match.play_match``), which never raises for
   what an entry does;
4. anything else that goes wrong here (no sandbox, a disk full while an
   artifact is prepared, a runner bug) is this machine's fault: a
   ``system_error`` result, charged to nobody, which the coordinator retries
   elsewhere (an artifact's fault names its entry: ``MatchResult.artifact_fault``).
   What one entry's artifact makes go wrong otherwise (it does not unpack or
   match its digest, its build's output cannot be copied out) is that entry's
   ``build_failed`` (``workers.artifacts``).

This machine's cache is ``$TOURNEY_WORK_DIR`` (default ``~/.cache/tourney``);
``tourney worker --work-dir`` sets it for its pool processes.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from runner.domain.games import get_game
from runner.domain.match_values import MatchResult, MatchSpec, system_error_result
from runner.domain.placeholders import ContestParams, board_size, has_placeholders
from runner.domain.redaction import redacted_result
from workers.cache_paths import WORK_DIR_ENV as WORK_DIR_ENV  # this machine's work directory
from workers.cache_paths import default_work_dir

if TYPE_CHECKING:
    from workers.artifacts import EntryDir
    from workers.match import MatchObserver
    from workers.sandbox import HostFactory

log = logging.getLogger("tourney.executor")

#: a system error's detail is cut to this length (it is one line in reports)
DETAIL_MAX = 500
#: a failed build's log travels back with the result up to this many characters (its end)
BUILD_LOG_MAX = 64 * 1024

#: ``fetch(digest)`` returns an entry's packed artifact (``runner.domain.entries.pack_entry``)
Fetch = Callable[[str], bytes]


def work_dir() -> Path:
    """This machine's work directory: ``$TOURNEY_WORK_DIR``, else ``workers.cache_paths``'s default."""
    return Path(os.environ.get(WORK_DIR_ENV) or default_work_dir())


def artifacts_dir() -> Path:
    """Where built entries are cached, by digest."""
    return work_dir() / "artifacts"


def machine_error_result(spec: MatchSpec, detail: str, worker: str) -> MatchResult:
    """A match this machine could not play (the detail cut to one sane line length)."""
    return system_error_result(
        spec, detail[:DETAIL_MAX], worker=worker, digests={n: r.digest for n, r in spec.entries.items()}
    )


def contest_params(spec: MatchSpec) -> ContestParams | None:
    """What a build command's placeholders are filled with for ``spec``; None when no entry's
    build uses any (then nothing about the contest reaches a build, and it is cached by digest)."""
    if not any(r.build and has_placeholders([r.build]) for r in spec.entries.values()):
        return None
    game = get_game(spec.game, **spec.game_params)
    return ContestParams(board_size(game, spec.board_text), spec.limits.move_wall_s)


def failed_build_logs(entry_dirs: Mapping[str, EntryDir]) -> dict[str, str]:
    """Each entry whose build failed, with (the end of) its build log."""
    # local: artifacts brings the sandbox and psutil (Celery's main process loads this module, plays nothing)
    from workers.artifacts import BuildFailed

    return {
        name: d.log[-BUILD_LOG_MAX:] or d.detail
        for name, d in entry_dirs.items()
        if isinstance(d, BuildFailed)
    }


def execute_match(
    spec: MatchSpec,
    fetch: Fetch,
    cache_root: Path,
    *,
    worker: str,
    observer: MatchObserver | None = None,
    hosts: HostFactory | None = None,
) -> MatchResult:
    """Build what ``spec`` needs (cached under ``cache_root``) and play it; never raises for
    an entry's or this machine's failure (the latter is a ``system_error`` result).

    ``hosts`` defaults to ``game_host_factory(spec.sandbox)``; ``observer`` sees every game
    and move as it is played (``tourney play`` prints them).
    """
    # local: Celery loads this module in every process; the referee and sandbox only where matches play
    from workers.artifacts import ArtifactCache, ArtifactError, cache_key
    from workers.engine_speed import scale_clocks, with_scales
    from workers.match import play_match
    from workers.sandbox import game_host_factory
    from workers.sandbox.cores import on_this_threads_cpus, timed_conditions

    try:
        # fair timing: builds and moves on a core of the match's own (workers.sandbox.cores)
        with timed_conditions(spec.exclusive_cores) as timing:
            hosts = on_this_threads_cpus(hosts if hosts is not None else game_host_factory(spec.sandbox))
            cache = ArtifactCache(cache_root, hosts, spec.limits)
            params = contest_params(spec)
            unbuilt = [
                n for n, r in spec.entries.items() if r.build and cache.cached(cache_key(r, params)) is None
            ]
            if observer is not None and unbuilt:
                observer.building(unbuilt)  # the live progress shows them while they build
            entry_dirs = cache.ensure_all(spec.entries, fetch, params)
            # engines asking for clocks scaled to this machine (docs/engines.md): measured here
            played, scales = scale_clocks(spec, entry_dirs, hosts)
            result = play_match(played, entry_dirs, hosts, worker=worker, observer=observer)
            result = with_scales(result, scales)
        logs = failed_build_logs(entry_dirs)
        result = dataclasses.replace(result, timing=timing, build_logs=logs or result.build_logs)
    except Exception as e:
        log.exception("match %s failed on this machine", spec.match_id)
        where = f"{worker}: " if worker else ""
        result = machine_error_result(spec, f"{where}{type(e).__name__}: {e}", worker)
        if isinstance(e, ArtifactError) and e.digest:
            result = dataclasses.replace(result, artifact_fault=e.digest)
    # the one place a result is made: nothing an entry printed leaves with a secret in it
    # (an unsandboxed entry can read the broker URL and key files; docs/config.md)
    return redacted_result(result)
