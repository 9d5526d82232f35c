"""Replays for the report, computed while the run still plays (issue 13: a shorter end).

After a run's last result everything waits for ``report.html``, and most of
writing it is replaying each game with the referee to draw its positions
(``runner.report.html.game_replay_doc``: about 60% of the report's time on a
round robin of short games). Those replays depend only on the game, the board
and the game's record, all known as soon as the match's result is accepted.
So ``tourney run`` hands each accepted result to a ``ReplayWarmer``, a thread
that computes the documents meanwhile (the coordinator mostly waits on the
broker then), and the report takes them from the ``ReplayMemo`` instead of
computing them again.

The memo is keyed by everything the document is computed from: the game's
reference and parameters, the board text and the record's canonical JSON, so
a document is only ever used for the very record it was made from; anything
not in the memo (a result accepted before a resume, a record the memo let go)
is computed as before. The page is the same either way. The memo keeps at most
``MAX_DOCS`` documents and ``MAX_CHARS`` of their JSON, dropping the oldest
first: a large run's report embeds the late rounds' replays, the latest ones;
and a warmer stops taking results after ``MAX_WARMED`` games (a large run's
report is not one that embeds every replay).
"""

from __future__ import annotations

import collections
import json
import logging
import queue
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from runner.domain.games import get_game
from runner.domain.match_values import GameRecord, MatchSpec
from runner.domain.wire import encode

log = logging.getLogger("tourney.report")

#: the most documents a memo holds (a document is tens of kilobytes in memory for a long game)
MAX_DOCS = 1_000
#: the most JSON characters its documents come to
MAX_CHARS = 4_000_000
#: the most games a warmer replays in one run: a run of more games is not one whose every
#: replay the report embeds (it keeps the late rounds'), and replaying each of them twice
#: would only add to the coordinator's CPU per match; beyond it the report computes its own
MAX_WARMED = 3 * MAX_DOCS

MemoKey = tuple[str, str, str, bytes]


def memo_key(game_name: str, game_params: Mapping[str, Any], board_text: str, record: GameRecord) -> MemoKey:
    """What a replay document is computed from (the record as the codec's JSON: one encoding per value)."""
    params = json.dumps(dict(game_params), sort_keys=True, default=str)
    return (game_name, params, board_text, encode(record))


class ReplayMemo:
    """Replay documents by ``memo_key``, the oldest dropped beyond the limits; thread-safe."""

    def __init__(self, max_docs: int = MAX_DOCS, max_chars: int = MAX_CHARS) -> None:
        self.max_docs, self.max_chars = max_docs, max_chars
        self._docs: collections.OrderedDict[MemoKey, tuple[dict[str, Any], int]] = collections.OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def put(self, key: MemoKey, doc: dict[str, Any]) -> None:
        size = len(json.dumps(doc, separators=(",", ":")))
        with self._lock:
            old = self._docs.pop(key, None)
            if old is not None:
                self._chars -= old[1]
            self._docs[key] = (doc, size)
            self._chars += size
            while self._docs and (len(self._docs) > self.max_docs or self._chars > self.max_chars):
                _, (_, dropped) = self._docs.popitem(last=False)
                self._chars -= dropped

    def get(self, key: MemoKey) -> dict[str, Any] | None:
        with self._lock:
            found = self._docs.get(key)
            if found is None:
                self.misses += 1
                return None
            self.hits += 1
            return found[0]

    def __len__(self) -> int:
        return len(self._docs)


class ReplayWarmer:
    """A thread filling a ``ReplayMemo`` with the replays of the results it is given."""

    def __init__(self, memo: ReplayMemo, max_warmed: int = MAX_WARMED) -> None:
        self.memo = memo
        self.max_warmed = max_warmed
        self.handed = 0  # games handed to the thread so far
        self._finished = False
        self._todo: queue.SimpleQueue[tuple[str, dict[str, Any], str, Sequence[GameRecord]] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._work, name="tourney-replays", daemon=True)
        self._thread.start()

    def add(
        self, game_name: str, game_params: Mapping[str, Any], board_text: str, games: Sequence[GameRecord]
    ) -> None:
        """Replay ``games`` (an accepted result's) in the background; returns at once."""
        if self._finished or self.handed + len(games) > self.max_warmed:
            return
        self.handed += len(games)
        self._todo.put((game_name, dict(game_params), board_text, list(games)))

    def add_result(self, spec: MatchSpec, games: Sequence[GameRecord]) -> None:
        """``add`` for an accepted result of ``spec`` (``Coordinator.on_accepted``)."""
        if not spec.boards:
            self.add(spec.game, spec.game_params, spec.board_text, games)
            return
        for record in games:  # a match of several openings: each game on its own
            self.add(spec.game, spec.game_params, spec.board_text_of(record), [record])

    def finish(self) -> None:
        """Nothing more will be added: the thread ends once it has replayed what it was given."""
        if not self._finished:
            self._finished = True
            self._todo.put(None)

    def close(self, timeout_s: float = 5.0) -> ReplayMemo:
        """``finish``, wait for the thread (at most ``timeout_s``) and give the memo (the thread
        may still add to it, which is safe: whatever is missing the report computes)."""
        self.finish()
        self._thread.join(timeout_s)
        return self.memo

    def _work(self) -> None:
        item = self._todo.get()
        if item is None:
            return
        # local: jinja2 (0.1 s of CPU) once there is work, not at the run's start; html imports this module
        from runner.report.html import game_replay_doc

        while item is not None:
            game_name, params, board_text, games = item
            try:
                game = get_game(game_name, **params)
                for record in games:
                    doc = game_replay_doc(game, board_text, record)
                    self.memo.put(memo_key(game_name, params, board_text, record), doc)
            except Exception:  # the report computes it again, and says what fails
                log.exception("could not replay a result ahead of the report")
            item = self._todo.get()
