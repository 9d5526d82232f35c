"""``entries: {from: submissions}`` and ``tourney freeze``: each team's counting version by digest,
checked when the frozen config loads (real intake, real store, real config loading)."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

from runner.commands.freeze import freeze
from runner.config import ConfigError, load_config
from runner.errors import UsageError
from runner.submissions.contest_dir import ContestDir
from runner.submissions.intake import store_upload, take_upload
from runner.submissions.store import SubmissionStore

ROOT = Path(__file__).resolve().parents[2]
README = b"Pousse\nJane Doe <jane@example.org>\n"
GREEDY = (ROOT / "entries" / "pousse" / "greedy" / "main.py").read_bytes()


def _targz(files: dict[str, tuple[bytes, int]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _submission(flavour: str) -> bytes:
    return _targz(
        {
            "runme": (b'#!/bin/sh\nexec python3 src/main.py "$@"\n', 0o755),
            "readme": (README, 0o644),
            "src/main.py": (GREEDY + f"\n# {flavour}\n".encode(), 0o644),
        }
    )


def _config(tmp: Path, deadline: str) -> Path:
    text = (ROOT / "configs" / "icfp98.yaml").read_text().replace("../entries/", f"{ROOT}/entries/")
    start = text.index("entries:\n")
    end = text.index("stages:\n")
    text = (
        text[:start]
        + "entries: {from: submissions}\n"
        + f"seed_opponents:\n  - path: {ROOT}/entries/pousse/greedy\n    include: [greedy]\n"
        + text[end:]
    )
    text = text.replace("deadline: 2027-08-29T23:59:59-04:00", f"deadline: {deadline}")
    text = text.replace("  registration: closed", f"  registration: closed\n  dir: {tmp / 'contest'}")
    text = text.replace("advance: {top: 6}", "advance: {top: 2}")
    path = tmp / "contest.yaml"
    path.write_text(text)
    return path


def _upload(contest: ContestDir, store: SubmissionStore, team: str, blob: bytes, state: str) -> str:
    config = load_config(ROOT / "configs" / "icfp98.yaml")
    assert config.submissions is not None
    (contest.incoming / "up").write_bytes(blob)
    digest = store_upload(contest, contest.incoming / "up")
    out = take_upload(
        contest, digest, "sub.tgz", config.submissions, team=team, game="pousse", protocol="icfp98"
    )
    assert out.entry_digest is not None, out.failure
    store.add_submission(
        team,
        upload_digest=digest,
        upload_name="sub.tgz",
        size=len(blob),
        entry_digest=out.entry_digest,
        state=state,
        steps=out.steps,
    )
    return out.entry_digest


@pytest.fixture
def contest(tmp_path: Path) -> tuple[Path, ContestDir, dict[str, str]]:
    config = _config(tmp_path, "2020-01-01T00:00:00+00:00")
    contest = ContestDir(tmp_path / "contest").make()
    store = SubmissionStore(contest.store)
    digests: dict[str, str] = {}
    for team in ("alpha", "bravo", "charlie", "delta"):
        store.add_team(team, [f"{team}@example.org"])
    digests["alpha"] = _upload(contest, store, "alpha", _submission("a1"), "ready")
    _upload(contest, store, "alpha", _submission("a2"), "failed")  # latest_ready: v1 still counts
    _upload(contest, store, "bravo", _submission("b1"), "ready")
    digests["bravo"] = _upload(contest, store, "bravo", _submission("b2"), "ready")
    _upload(contest, store, "charlie", _submission("c1"), "failed")  # nothing counts
    digests["delta"] = _upload(contest, store, "delta", _submission("d1"), "ready")
    store.close()
    return config, contest, digests


def test_a_config_of_submissions_validates_without_entries(
    contest: tuple[Path, ContestDir, dict[str, str]],
) -> None:
    config_path, _, _ = contest
    config = load_config(config_path)
    assert config.entries_from_submissions and config.entry_specs() == {}
    text = config_path.read_text()
    cut = text[: text.index("submissions:\n  deadline")]
    config_path.write_text(cut)
    with pytest.raises(ConfigError) as e:
        load_config(config_path)
    (problem,) = e.value.problems
    assert problem.line == text[: text.index("entries: {from")].count("\n") + 1
    assert "needs a submissions: section" in problem.message


def test_freeze_plays_each_teams_counting_version_by_digest(
    contest: tuple[Path, ContestDir, dict[str, str]],
) -> None:
    config_path, _, digests = contest
    frozen = freeze(config_path, load_config(config_path))
    assert [(e.team, e.version) for e in frozen.counting.entries] == [
        ("alpha", 1),
        ("bravo", 2),
        ("delta", 1),
    ]
    assert frozen.counting.missing == ["charlie"]
    played = load_config(frozen.config)
    assert {n: s.digest for n, s in played.entry_specs().items()} == digests
    assert played.submissions is None and not played.entries_from_submissions
    record = json.loads(frozen.record.read_text())
    assert [e["entry_digest"] for e in record["entries"]] == list(digests.values())
    # the same store frozen again writes the same config, byte for byte: a run of it resumes
    before = frozen.config.read_bytes()
    assert freeze(config_path, load_config(config_path)).config.read_bytes() == before


def test_a_frozen_entry_whose_code_changed_is_refused_where_it_is_named(
    contest: tuple[Path, ContestDir, dict[str, str]],
) -> None:
    config_path, contest_dir, digests = contest
    frozen = freeze(config_path, load_config(config_path))
    doc = yaml.safe_load(frozen.config.read_text())
    # bravo's entry directory, edited after it was submitted
    changed = contest_dir.path / "changed"
    shutil.copytree(contest_dir.entry(digests["bravo"]), changed)
    (changed / "src" / "main.py").write_text("print('not what was submitted')\n")
    doc["entries"][1]["path"] = str(changed)
    # alpha's submission pointing at delta's entry
    doc["entries"][0]["path"] = str(contest_dir.entry(digests["delta"]))
    frozen.config.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(ConfigError) as e:
        load_config(frozen.config)
    said = [p.message for p in e.value.problems]
    assert any("is 'delta', not team 'alpha'" in m for m in said), said
    assert any("its code changed since it was submitted" in m for m in said), said


def test_before_the_deadline_freeze_refuses(tmp_path: Path) -> None:
    config_path = _config(tmp_path, "2099-01-01T00:00:00+00:00")
    with pytest.raises(UsageError, match="has not passed"):
        freeze(config_path, load_config(config_path))
