"""The typed wire messages across the real boundary: the coordinator's envelope through the
worker's task body, the worker's notes through a real Redis inbox, parsed by the dispatcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.domain.entries import load_entry, pack_entry
from runner.domain.fleet import WORKER_KEY_FILE_ENV
from runner.domain.match_values import Limits, MatchSpec, VerdictKind
from runner.domain.signing import open_message, signed
from runner.domain.wire import Finished, Skipped, Started, TaskEnvelope, encode, task_digest
from runner.orchestration.redis_server import EmbeddedRedis
from tests.integration.helpers import Organiser, take_task
from workers import tasks
from workers.celery_app import configure
from workers.policy import POLICY_ENV, WorkerPolicy

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_envelope_in_notes_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOURNEY_WORK_DIR", str(tmp_path / "work"))
    monkeypatch.setenv("TOURNEY_WORKER_NAME", "wire-worker")
    organiser = Organiser(tmp_path / "home")
    key = organiser.key
    monkeypatch.setenv(WORKER_KEY_FILE_ENV, str(organiser.enrol("wire-worker")))
    monkeypatch.setattr(tasks, "_key", None)  # this process's worker reads its key afresh
    # this in-process worker plays unsandboxed, as if started with --allow-unsandboxed
    monkeypatch.setenv(POLICY_ENV, WorkerPolicy(allow_unsandboxed=True).to_json())
    specs = [load_entry(FIXTURES / "boxing" / name)[0] for name in ("native", "first_fit")]
    refs = {s.name: s.ref() for s in specs}
    order = list(refs)
    spec = MatchSpec.of(
        match_id="wire", game="boxing", board_id="b", board_text="----\n----\n", orders=[order, order[::-1]],
        entries=refs, limits=Limits(move_wall_s=10.0), seed=0, sandbox="none",
    )  # fmt: skip
    blobs: dict[str, Path] = {}
    for s in specs:
        blobs[s.digest] = tmp_path / f"{s.digest}.tar.gz"
        blobs[s.digest].write_bytes(pack_entry(s.path))
    server = EmbeddedRedis(tmp_path / "redis").start()
    # this process stands in for the worker, which points its app at the broker as it starts
    configure(server.url())
    dispatcher = organiser.dispatcher(server.url(), "wire-run")
    try:
        dispatcher.publish_artifacts(blobs)
        dispatcher.mark_alive()  # the coordinator's run is alive: its tasks are played
        envelope = dispatcher.envelope(spec, 1)
        assert envelope == TaskEnvelope("wire-run", 1, spec, heartbeat_s=0.5, heartbeat_ttl_s=1.5)
        # sent as the coordinator sends it (the run wants attempt 1), taken as a worker takes it
        dispatcher.submit(spec, 1)
        task = take_task(dispatcher.redis, dispatcher.queue)
        assert open_message(task, TaskEnvelope, key.public) == (envelope, key.key_id)

        # what Celery hands the task is the signed envelope as a string
        assert tasks.execute(task)["status"] == "done"
        assert tasks.execute(signed(dispatcher.envelope(spec, 2), key).decode())["status"] == "skipped"
        assert tasks.execute(encode(envelope).decode())["status"] == "refused"  # unsigned

        notes = dispatcher.poll(5.0)
        assert [type(n) for n in notes] == [Started, Finished, Skipped]
        started, finished, skipped = notes
        assert isinstance(started, Started) and (started.match_id, started.attempt) == ("wire", 1)
        assert started.worker == "wire-worker" and len(started.execution) == 32 and started.ts > 0
        # bound to this run and the very task it answers (docs/fleet.md)
        assert (started.run, started.task) == ("wire-run", task_digest(task))
        assert isinstance(finished, Finished) and finished.worker == "wire-worker"
        assert [g.verdict.kind for g in finished.result.games] == [VerdictKind.NORMAL] * 2
        assert finished.result.digests == {name: r.digest for name, r in refs.items()}
        assert skipped == Skipped("wire", 2, "wire-worker")
    finally:
        dispatcher.forget_run()
        dispatcher.close()
        server.stop()
