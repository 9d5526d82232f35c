"""Entry directories: schema errors are located, digests track code, packing is faithful."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.domain.entries import EntryError, directory_digest, load_entry, pack_entry, unpack_entry


def _entry(tmp: Path, yaml_text: str) -> Path:
    d = tmp / "e"
    d.mkdir()
    (d / "entry.yaml").write_text(yaml_text)
    (d / "main.py").write_text("print('hi')\n")
    return d


def test_variants_become_entries_sharing_the_digest(tmp_path: Path) -> None:
    d = _entry(
        tmp_path,
        "name: r\ngame: boxing\nprotocol: potm-arena\nrun: [python3, main.py, '{mark}']\n"
        "variants:\n  r-7: {args: ['--seed', '7']}\n",
    )
    specs = load_entry(d)
    assert [s.name for s in specs] == ["r", "r-7"]
    assert specs[1].args == ["--seed", "7"] and specs[0].digest == specs[1].digest
    assert specs[1].ref().args == ["--seed", "7"]


def test_digest_changes_with_code_and_pack_round_trips(tmp_path: Path) -> None:
    d = _entry(tmp_path, "name: r\ngame: boxing\nprotocol: potm-arena\nrun: [python3, main.py]\n")
    before = directory_digest(d)
    blob = pack_entry(d)
    assert pack_entry(d) == blob  # deterministic bytes for the same digest
    out = tmp_path / "out"
    unpack_entry(blob, out)
    assert directory_digest(out) == before
    (d / "main.py").write_text("print('changed')\n")
    assert directory_digest(d) != before


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("name: r\ngame: checkers\nprotocol: potm-arena\nrun: [x]\n", "unknown game 'checkers'"),
        ("name: r\ngame: boxing\nprotocol: telnet\nrun: [x]\n", "unknown protocol 'telnet'"),
        ("name: r\ngame: boxing\nprotocol: potm-arena\nrun: [x]\ncolour: red\n", "colour"),
        ("- just a list\n", "expected a mapping"),
    ],
)
def test_bad_entry_yaml_names_the_file_and_problem(tmp_path: Path, text: str, needle: str) -> None:
    d = _entry(tmp_path, text)
    with pytest.raises(EntryError) as e:
        load_entry(d)
    assert str(d / "entry.yaml") in str(e.value) and needle in str(e.value)


def test_missing_entry_yaml_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EntryError, match=r"no entry\.yaml"):
        load_entry(tmp_path)
