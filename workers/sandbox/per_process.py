"""One value per process, made on first use and closed at exit: the reusing host factories
(``workers.sandbox.pool`` for bubblewrap, ``workers.sandbox.plain_reuse`` for ``sandbox:
none``) keep sandboxes and game directories across matches this way.

A forked child makes its own: what its parent kept (sandboxes, directories) is not its to use.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerProcess(Generic[T]):
    """``get()`` this process's value (made by ``make`` the first time, ``close``d at exit);
    ``close_mine()`` closes it now, if this process made one."""

    def __init__(self, make: Callable[[], T], close: Callable[[T], None]) -> None:
        self._make, self._close = make, close
        self._held: tuple[int, T] | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._held is None or self._held[0] != os.getpid():
                value = self._make()
                atexit.register(self._close, value)
                self._held = (os.getpid(), value)
            return self._held[1]

    def close_mine(self) -> None:
        with self._lock:
            held = self._held
        if held is not None and held[0] == os.getpid():
            self._close(held[1])
