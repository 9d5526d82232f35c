"""The contest store: tokens kept hashed, revocation, versions numbered in order under concurrency."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from runner.submissions.counting import counting
from runner.submissions.store import SubmissionStore, TeamError


def _store(tmp_path: Path) -> SubmissionStore:
    return SubmissionStore(tmp_path / "s.sqlite")


def test_a_token_authenticates_its_team_and_is_never_stored(tmp_path: Path) -> None:
    store = _store(tmp_path)
    token = store.add_team("alpha", ["a@example.org"])
    other = store.add_team("beta", ["b@example.org"])
    assert store.authenticate(token).team == "alpha"
    assert store.authenticate(other).team == "beta"
    secret = token.split(".", 1)[1]
    raw = sqlite3.connect(tmp_path / "s.sqlite").execute("SELECT * FROM teams").fetchall()
    assert secret not in repr(raw)  # only a salted hash
    # the same id with another secret: refused
    forged = token.split(".", 1)[0] + "." + ("y" if secret[0] == "x" else "x") + secret[1:]
    assert store.authenticate(forged).team is None and store.authenticate(forged).refused == "unknown token"
    assert store.authenticate("Bearer nonsense").refused == "not a tourney token"


def test_a_revoked_token_is_refused_with_the_reason(tmp_path: Path) -> None:
    store = _store(tmp_path)
    token = store.add_team("alpha", ["a@example.org"])
    store.revoke("alpha", "left the contest")
    auth = store.authenticate(token)
    assert auth.team is None and "revoked" in auth.refused
    with pytest.raises(TeamError, match="revoked already"):
        store.revoke("alpha")


def test_team_names_follow_the_entry_name_rule_and_are_unique(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(TeamError, match="not a valid name"):
        store.add_team("../evil", ["a@example.org"])
    store.add_team("alpha", ["a@example.org"])
    with pytest.raises(TeamError, match="exists already"):
        store.add_team("alpha", ["c@example.org"])
    with pytest.raises(TeamError, match="not an email"):
        store.add_team("gamma", ["nobody"])


def test_the_organiser_token_is_its_own(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = store.new_organiser_token()
    assert store.authenticate(first).organiser
    second = store.new_organiser_token()
    assert not store.authenticate(first).organiser and store.authenticate(second).organiser


def test_simultaneous_uploads_of_one_team_get_distinct_versions_in_order(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add_team("alpha", ["a@example.org"])
    stores = [SubmissionStore(tmp_path / "s.sqlite") for _ in range(4)]  # four connections, as processes

    def upload(s: SubmissionStore, n: int) -> None:
        for i in range(10):
            s.add_submission(
                "alpha",
                upload_digest=f"{n}-{i}",
                upload_name="x.tgz",
                size=1,
                entry_digest="d",
                state="checking",
                steps=[("received", "ok", "")],
            )

    threads = [threading.Thread(target=upload, args=(s, n)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    versions = [s.version for s in store.submissions("alpha")]
    assert versions == list(range(1, 41))


def test_counting_rules(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add_team("alpha", ["a@example.org"])
    states = ["ready", "failed", "refused", "checking"]
    for state in states:
        store.add_submission(
            "alpha",
            upload_digest=state,
            upload_name="x",
            size=1,
            entry_digest=None if state == "refused" else "d",
            state=state,
            steps=[],
        )
    versions = store.submissions("alpha")
    ready = counting(versions, "latest_ready")
    latest = counting(versions, "latest")
    assert ready is not None and ready.version == 1
    assert latest is not None and latest.version == 4  # the refused v3 never counts
    assert (c := counting(versions, "chosen")) is not None and c.version == 1  # none chosen: latest ready
    store.choose("alpha", 2)
    chosen = counting(store.submissions("alpha"), "chosen")
    assert chosen is not None and chosen.version == 2
    with pytest.raises(TeamError, match="refused"):
        store.choose("alpha", 3)


def test_a_received_version_waits_for_its_intake_which_is_recorded_once(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add_team("alpha", ["a@example.org"])
    received = [("received", "ok", "10 bytes"), ("unpacked", "running", "waiting to be unpacked")]
    subs = [
        store.add_submission(
            "alpha",
            upload_digest=f"{i}" * 64,
            upload_name="s.tgz",
            size=10,
            entry_digest=None,
            state="checking",
            steps=received,
        )
        for i in range(3)
    ]
    assert [s.version for s in store.received()] == [1, 2, 3]
    assert [s.version for s in store.received(limit=2)] == [1, 2]  # oldest first
    unpacked = [("unpacked", "ok", "3 file(s)"), ("layout", "ok", "icfp98")]
    assert store.record_intake(subs[0].id, entry_digest="e" * 64, steps=unpacked)
    refused = [("unpacked", "failed", "member '../x': a path with '..'")]
    assert store.record_intake(subs[1].id, entry_digest=None, steps=refused, failure=refused[0][2])
    assert not store.record_intake(subs[1].id, entry_digest="e" * 64, steps=unpacked)  # once only
    assert [s.version for s in store.received()] == [3]
    one, two = store.submission(subs[0].id), store.submission(subs[1].id)
    assert one is not None and one.state == "checking" and one.entry_digest == "e" * 64
    assert [(s.step, s.status) for s in one.steps] == [
        ("received", "ok"),
        ("unpacked", "ok"),
        ("layout", "ok"),
    ]
    assert two is not None and two.state == "refused" and two.failure == refused[0][2]
    assert [(s.step, s.status) for s in two.steps] == [("received", "ok"), ("unpacked", "failed")]
    assert counting(store.submissions("alpha"), "latest") == one  # a refused one never counts
