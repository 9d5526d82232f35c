"""Keeping the stored matches equal to the plan: new matches in, unplanned ones obsolete,
obsolete ones planned again revived (kept, or replayed when their code changed)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from runner.domain.match_values import MatchPlan, MatchSpec
from runner.storage.connection import StoreConnection
from runner.storage.rows import column_text, spec_from_row


@dataclass(frozen=True)
class PlanSync:
    """What ``sync_plan`` changed."""

    new: list[str]
    obsolete: list[str]
    revived: list[str]  # obsolete matches planned again (kept or replayed)
    #: revived matches whose official result was played from another spec (code adopted since):
    #: that result is superseded and the match is pending again, with the spec planned now
    replayed: list[str] = field(default_factory=list)

    @property
    def kept(self) -> list[str]:
        """Revived matches planned exactly as they were played: the same match, its result stands."""
        return [m for m in self.revived if m not in set(self.replayed)]


class StorePlanning(StoreConnection):
    """The part of ``RunStore`` the planner's output goes through."""

    def sync_plan(self, planned: Sequence[MatchSpec]) -> PlanSync:
        """Make the live matches exactly ``planned`` (specs, in plan order).

        New ids are inserted as ``pending``; live ids no longer planned become
        ``obsolete``; obsolete ids planned again come back (``done`` when they
        still hold an official result: same id, same players, board and seats).
        """
        by_id = {spec.match_id: spec for spec in planned}
        return self.sync_plans([spec.plan for spec in planned], lambda plan: by_id[plan.match_id])

    def sync_plans(
        self, planned: Sequence[MatchPlan], spec_for: Callable[[MatchPlan], MatchSpec]
    ) -> PlanSync:
        """``sync_plan`` for plans, asking ``spec_for`` only for the ones it inserts: a plan of
        half a million played matches builds no spec for them (issue 13, item 3)."""
        now = time.time()
        wanted = {plan.match_id for plan in planned}
        new: list[str] = []
        revived: list[str] = []
        replayed: list[str] = []
        obsolete: list[str] = []
        with self._tx() as c:
            existing = {r["id"]: r["state"] for r in c.execute("SELECT id, state FROM matches")}
            seq = int(c.execute("SELECT COALESCE(MAX(seq), 0) FROM matches").fetchone()[0])
            for plan in planned:
                state = existing.get(plan.match_id)
                if state is None:
                    seq += 1
                    self._insert_pending(c, spec_for(plan), seq, now)
                    new.append(plan.match_id)
                elif state == "obsolete":
                    revived.append(plan.match_id)
                    if self._revive(c, spec_for(plan), now):
                        replayed.append(plan.match_id)
            for mid, state in existing.items():
                if mid not in wanted and state != "obsolete":
                    c.execute(
                        "UPDATE matches SET state='obsolete', lease_expires=NULL, updated_at=? WHERE id=?",
                        (now, mid),
                    )
                    self._log_in(c, "obsolete", mid, f"no longer planned (was {state})")
                    obsolete.append(mid)
        return PlanSync(new, obsolete, revived, replayed)

    def _revive(self, c: sqlite3.Connection, spec: MatchSpec, now: float) -> bool:
        """An obsolete match planned again. Its id names its stage, round, pairing, players, board
        and seats, not its code: with the spec it was played from (same code) it is the same match
        and keeps its official result; after ``tourney accept --adopt-code`` changed an entry's code
        it is not, so that result is superseded and it is played again (docs/config.md, "Readings
        of the seeds", seed 000). Returns whether it is to be replayed."""
        mid = spec.match_id
        row = c.execute("SELECT spec, pairing, players FROM matches WHERE id=?", (mid,)).fetchone()
        has = c.execute("SELECT 1 FROM results WHERE match_id=? AND status='official'", (mid,)).fetchone()
        same = row is not None and spec_from_row(row) == spec
        if has and same:
            c.execute("UPDATE matches SET state='done', updated_at=? WHERE id=?", (now, mid))
            self._log_in(c, "revived", mid, "kept: planned again with the spec and code it was played with")
            return False
        if has:
            c.execute("UPDATE results SET status='superseded' WHERE match_id=? AND status='official'", (mid,))
        c.execute(
            "UPDATE matches SET state='pending', spec=?, lease_expires=NULL, updated_at=? WHERE id=?",
            (column_text(spec), now, mid),
        )
        if has:
            self._log_in(c, "revived", mid, "replayed: planned again with other code than it was played with")
        else:
            self._log_in(c, "revived", mid, "planned again")
        return bool(has)

    def add_planned(self, planned: Sequence[MatchSpec]) -> list[str]:
        """Append matches a lazy plan added (``runner.domain.stages.round_robin``) as ``pending``,
        in order, without reading the rest of the plan: O(1) per match, unlike ``sync_plan``.
        Ids already stored are left as they are; the inserted ids are returned."""
        if not planned:
            return []
        now = time.time()
        new: list[str] = []
        with self._tx() as c:
            # read in the transaction, not kept: another process (``tourney accept``) may have
            # added matches; the ``matches_seq`` index makes it a lookup, not a scan
            seq = int(c.execute("SELECT COALESCE(MAX(seq), 0) FROM matches").fetchone()[0])
            for spec in planned:
                if c.execute("SELECT 1 FROM matches WHERE id=?", (spec.match_id,)).fetchone() is not None:
                    continue
                seq += 1
                self._insert_pending(c, spec, seq, now)
                new.append(spec.match_id)
        return new

    @staticmethod
    def _insert_pending(c: sqlite3.Connection, spec: MatchSpec, seq: int, now: float) -> None:
        plan = spec.plan
        c.execute(
            "INSERT INTO matches(id, seq, stage, round, bracket, pairing, players, board_id, orders, "
            "spec, state, updated_at) VALUES(?,?,?,?,?,?,?,?,?,?, 'pending', ?)",
            (
                spec.match_id,
                seq,
                plan.stage,
                plan.round,
                plan.bracket,
                plan.pairing,
                json.dumps(list(plan.players)),
                plan.board_id,
                json.dumps(plan.orders),
                column_text(spec),
                now,
            ),
        )
        boards = [(spec.board_id, spec.board_text), *((b.board_id, b.text) for b in spec.boards)]
        # a match of several openings: each game's own board, for its replay
        c.executemany("INSERT OR IGNORE INTO boards(id, text) VALUES(?, ?)", boards)
