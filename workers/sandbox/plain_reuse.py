"""``sandbox: none`` with each entry's working copy kept for its next game (issue 13).

A plain host (``workers.sandbox.plain``) gives every game a private copy of
the entry directory and a private TMPDIR. Making and removing that copy cost
more than the moves of a short game: on a disk-backed ``/tmp`` about 2 ms to
copy and 7 ms to remove, and the first run of a freshly copied binary about
2 ms more than the next ones (measured on the 2-core development machine).
That, and a factory built per match that swept ``/tmp`` for stale
directories each time, made a match with ``sandbox: none`` slower than one
in the bubblewrap sandbox.

So, as the bubblewrap sandboxes are reused (``workers.sandbox.pool``), a game
directory whose game left it exactly as it was given is kept for the same
entry's next game in this process. "Exactly as given" is checked, not
assumed: every path in the working copy with its inode, mode, size,
modification and change times (an entry cannot set a change time back), and
an empty TMPDIR; anything else and the directory is removed and the next game
gets a fresh copy. A game that writes into its working copy (ICFP'98
``support/`` state) therefore always starts from a fresh one, as before.
Nothing else carries over: every potm-arena game holds its arena file for itself
(``workers.protocols.arena_lock``), and
every process of a game is dead when it ends (``PlainHost``).

``TOURNEY_SANDBOX_REUSE=0`` turns this off too (``workers.sandbox.pool``).
"""

from __future__ import annotations

import collections
import shutil
import threading
from pathlib import Path

from runner.domain.match_values import Limits
from workers.sandbox.base import EntryHost
from workers.sandbox.per_process import PerProcess
from workers.sandbox.plain import PlainHost, PlainHostFactory, new_game_dir
from workers.sandbox.tree import tree_signature, walk_lstat

#: idle game directories kept per process (each a copy of one entry, on disk)
MAX_IDLE = 16

#: each path of a working copy: (relative path, inode, mode, size, mtime ns, ctime ns)
CopyState = tuple[tuple[str, int, int, int, int, int], ...]


def copy_state(root: Path) -> CopyState:
    """What tells a working copy's files changed, written, replaced, added or removed."""
    return tuple(
        (rel, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        for rel, st in walk_lstat(root)
    )


class _Kept:
    """A game directory and the state its working copy must still have to be reused."""

    def __init__(self, root: Path, state: CopyState) -> None:
        self.root = root
        self.state = state

    def untouched(self) -> bool:
        try:
            return not any((self.root / "tmp").iterdir()) and copy_state(self.root / "work") == self.state
        except OSError:
            return False


class ReusingPlainHostFactory(PlainHostFactory):
    """Plain hosts whose game directories are kept for the same entry's next game (module doc)."""

    def __init__(self, max_idle: int = MAX_IDLE) -> None:
        super().__init__()
        self.max_idle = max_idle
        #: idle directories by key (entry dir, its contents' signature), least recently kept first
        self._idle: collections.OrderedDict[int, tuple[tuple[str, object], _Kept]] = collections.OrderedDict()
        self._lock = threading.Lock()
        #: games that got a kept directory, and ones that needed a new copy (for tests and benchmarks)
        self.reused = 0
        self.created = 0

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        key = (str(entry_dir), tree_signature(entry_dir))
        kept = self._take(key)
        if kept is None:
            root = new_game_dir(entry_dir)
            kept = _Kept(root, copy_state(root / "work"))
            self.created += 1
        else:
            self.reused += 1
        return _KeptHost(entry_dir, self, key, kept)

    def _take(self, key: tuple[str, object]) -> _Kept | None:
        while True:
            with self._lock:
                ident = next((i for i, (k, _) in self._idle.items() if k == key), None)
                if ident is None:
                    return None
                _, kept = self._idle.pop(ident)
            if kept.untouched():  # checked again: nothing may touch it while idle either
                return kept
            shutil.rmtree(kept.root, ignore_errors=True)

    def give(self, key: tuple[str, object], kept: _Kept) -> None:
        """Keep ``kept`` for ``key``'s next game if its game left it as given, else remove it."""
        if not kept.untouched():
            shutil.rmtree(kept.root, ignore_errors=True)
            return
        evicted: list[_Kept] = []
        with self._lock:
            self._idle[id(kept)] = (key, kept)
            while len(self._idle) > self.max_idle:
                evicted.append(self._idle.popitem(last=False)[1][1])
        for old in evicted:
            shutil.rmtree(old.root, ignore_errors=True)

    def close_all(self) -> None:
        """Remove every kept directory (at exit)."""
        with self._lock:
            kept = [k for _, k in self._idle.values()]
            self._idle.clear()
        for k in kept:
            shutil.rmtree(k.root, ignore_errors=True)

    def __len__(self) -> int:
        return len(self._idle)


class _KeptHost(PlainHost):
    """A plain host whose game directory goes back to its factory at ``close``."""

    def __init__(
        self,
        entry_dir: Path,
        factory: ReusingPlainHostFactory,
        key: tuple[str, object],
        kept: _Kept,
    ) -> None:
        try:
            super().__init__(entry_dir, root=kept.root)
        except BaseException:
            shutil.rmtree(kept.root, ignore_errors=True)
            raise
        self._factory, self._key, self._kept = factory, key, kept

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._end_game()  # every process of the game is dead before the directory is judged
        self._factory.give(self._key, self._kept)


#: this process's one reusing plain factory (a forked child gets its own)
shared = PerProcess(ReusingPlainHostFactory, ReusingPlainHostFactory.close_all)


def shared_plain_factory() -> ReusingPlainHostFactory:
    """This process's one reusing plain factory (a forked child gets its own)."""
    return shared.get()


__all__ = ["ReusingPlainHostFactory", "copy_state", "shared_plain_factory"]
