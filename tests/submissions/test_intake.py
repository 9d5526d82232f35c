"""An upload through unpacking, the layout and the entry intake, with the shipped configs' rules."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from runner.config import load_config
from runner.config.submission_rules import SubmissionsModel
from runner.domain.entries import load_entry
from runner.domain.packing import pack_entry
from runner.submissions.archive import NOT_AN_ARCHIVE
from runner.submissions.contest_dir import ContestDir
from runner.submissions.intake import (
    IntakeOutcome,
    ensure_artifact,
    format_refusal,
    store_upload,
    take_upload,
)

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
README = b"Pousse by Team Alpha\nJane Doe <jane@example.org>\n"


def _rules(name: str) -> SubmissionsModel:
    rules = load_config(CONFIGS / name).submissions
    assert rules is not None
    return rules


def _targz(files: dict[str, tuple[bytes, int]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _take(tmp_path: Path, blob: bytes, name: str, config: str, protocol: str) -> IntakeOutcome:
    contest = ContestDir(tmp_path / "c").make()
    (contest.incoming / "up").write_bytes(blob)
    digest = store_upload(contest, contest.incoming / "up")
    rules = _rules(config)
    game = load_config(CONFIGS / config).game
    return take_upload(contest, digest, name, rules, team="alpha", game=game, protocol=protocol)


ICFP_GOOD = {
    "runme": (b"#!/bin/sh\nexec python3 support/p.py\n", 0o755),
    "readme": (README, 0o644),
    "src/p.py": (b"print('a1')\n", 0o644),
}


def test_an_icfp98_upload_becomes_the_teams_entry(tmp_path: Path) -> None:
    out = _take(tmp_path, _targz(ICFP_GOOD), "sub.tar.gz", "icfp98.yaml", "icfp98")
    assert out.failure == "" and out.entry_digest is not None
    assert [s[0] for s in out.steps] == ["received", "unpacked", "layout"]
    entry = tmp_path / "c" / "entries" / out.entry_digest
    (spec,) = load_entry(entry)  # the same intake as an organiser's entry directory
    assert spec.name == "alpha" and spec.protocol == "icfp98" and spec.run == ["./runme"]
    assert spec.digest == out.entry_digest
    # packed for the workers when its check is sent, the same bytes for the same digest
    contest = ContestDir(tmp_path / "c")
    assert not contest.artifact(out.entry_digest).exists()
    artifact = ensure_artifact(contest, out.entry_digest)
    assert (
        artifact.read_bytes() == pack_entry(entry) and ensure_artifact(contest, out.entry_digest) == artifact
    )
    assert not any((tmp_path / "c" / "incoming").iterdir())  # the work directory is gone


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"readme": (b"we are great\n", 0o644)}, "signed with the team members' names"),
        ({"runme": (b"#!/bin/sh\n", 0o644)}, "runme is not executable"),
        ({"extra.txt": (b"x", 0o644)}, "unexpected 'extra.txt'"),
    ],
)
def test_an_icfp98_upload_without_the_layout_says_what_is_missing(
    tmp_path: Path, change: dict[str, tuple[bytes, int]], match: str
) -> None:
    out = _take(tmp_path, _targz({**ICFP_GOOD, **change}), "sub.tgz", "icfp98.yaml", "icfp98")
    assert out.entry_digest is None and out.steps[-1][:2] == ("layout", "failed")
    assert match in out.failure


def test_an_icfp98_upload_wrapped_in_one_directory_is_taken(tmp_path: Path) -> None:
    wrapped = {f"alpha/{k}": v for k, v in ICFP_GOOD.items()}
    assert _take(tmp_path, _targz(wrapped), "sub.tgz", "icfp98.yaml", "icfp98").entry_digest


def test_a_potm_single_source_file_is_built_as_its_language_says(tmp_path: Path) -> None:
    out = _take(tmp_path, b"int main(void){return 0;}\n", "boxer.c", "potm94.yaml", "potm-arena")
    assert out.entry_digest is not None, out.failure
    (spec,) = load_entry(tmp_path / "c" / "entries" / out.entry_digest)
    assert spec.build == "cc -O2 -o a.out boxer.c" and spec.run == ["./a.out", "{mark}"]


def test_a_potm_file_of_an_unknown_language_is_refused(tmp_path: Path) -> None:
    out = _take(tmp_path, b"program x;", "boxer.pas", "potm94.yaml", "potm-arena")
    assert (
        out.entry_digest is None and "not a source file this contest builds (known: .c, .py)" in out.failure
    )


def test_an_entry_yaml_of_another_game_is_refused(tmp_path: Path) -> None:
    yaml_text = b"name: x\ngame: pousse\nprotocol: icfp98\nrun: [./a]\n"
    out = _take(
        tmp_path,
        _targz({"entry.yaml": (yaml_text, 0o644), "a": (b"x", 0o755)}),
        "x.tgz",
        "potm94.yaml",
        "potm-arena",
    )
    assert out.entry_digest is None and "this contest plays 'boxing'" in out.failure


def test_the_first_bytes_refuse_what_is_no_archive_at_once(tmp_path: Path) -> None:
    icfp, potm = _rules("icfp98.yaml"), _rules("potm94.yaml")
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("runme", b"x")
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w") as t:
        t.addfile(tarfile.TarInfo("runme"), io.BytesIO(b""))
    for blob in (_targz(ICFP_GOOD), zipped.getvalue(), plain.getvalue()):
        assert format_refusal(blob[:512], "sub.tgz", icfp) is None
    assert format_refusal(b"just text\n", "sub.tgz", icfp) == NOT_AN_ARCHIVE
    assert format_refusal(b"int main(){}\n", "entry.c", potm) is None  # POTM's one source file
    assert format_refusal(b"int main(){}\n", "entry", potm) == NOT_AN_ARCHIVE


def test_a_stored_upload_is_kept_once_and_nothing_else_is_taken_for_it(tmp_path: Path) -> None:
    contest = ContestDir(tmp_path / "c").make()
    for name in ("a", "b"):
        (contest.incoming / name).write_bytes(b"same bytes")
    digest = store_upload(contest, contest.incoming / "a", durable=True)
    assert store_upload(contest, contest.incoming / "b", durable=True) == digest
    assert (contest.uploads / digest).read_bytes() == b"same bytes" and not any(contest.incoming.iterdir())
    # a directory where the upload belongs (a disk's failure): an error, never taken as stored
    (contest.incoming / "c").write_bytes(b"other bytes")
    blocker = contest.uploads / hashlib.sha256(b"other bytes").hexdigest()
    blocker.mkdir()
    with pytest.raises(IsADirectoryError):
        store_upload(contest, contest.incoming / "c", durable=True)
