"""Names are plain words (issue 25 item 6): entry, variant, board, stage and tournament names
with control characters (or spaces, or too long) are refused at their line, and the
message shows them escaped."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import pytest

from runner.commands.validate import cmd_validate
from runner.config import ConfigError, load_config
from runner.domain.entries import EntryError, load_entry

EVIL = "evil\x1b]0;PWNED\x07"


def _entry(root: Path, dirname: str, yaml_text: str) -> Path:
    d = root / "entries" / dirname
    d.mkdir(parents=True)
    (d / "entry.yaml").write_text(yaml_text)
    (d / "main.py").write_text("print('hi')\n")
    return d


def _yaml(name: str, extra: str = "") -> str:
    return f'name: "{name}"\ngame: boxing\nprotocol: potm-arena\nrun: [python3, main.py]\n{extra}'


@pytest.mark.parametrize(
    ("name", "ok"),
    [("gcc-4.2", True), ("c++", True), ("A_b.9", True), ("x" * 64, True), ("x" * 65, False),
     ("-lead", False), (".hidden", False), ("two words", False), ("caf\u00e9", False), (EVIL, False)],
)  # fmt: skip
def test_entry_names_follow_the_pattern(tmp_path: Path, name: str, ok: bool) -> None:
    d = _entry(tmp_path, "e", _yaml(name.replace("\x1b", "\\e").replace("\x07", "\\a")))
    if ok:
        assert load_entry(d)[0].name == name
        return
    with pytest.raises(EntryError) as e:
        load_entry(d)
    msg = str(e.value)
    assert msg.startswith(f"{d / 'entry.yaml'}:1:7: name: entry name ")
    assert "is not a valid name: expected 1-64 of" in msg
    assert "\x1b" not in msg and "\x07" not in msg


def test_variant_names_in_entry_yaml_follow_the_pattern(tmp_path: Path) -> None:
    d = _entry(tmp_path, "e", _yaml("good", 'variants:\n  "bad\\ename": {args: ["-x"]}\n'))
    with pytest.raises(EntryError, match=r"entry\.yaml:6:3: variants: variant name 'bad\\x1bname'"):
        load_entry(d)


CONFIG = """\
name: t
game: boxing
boards:
  "b\\a1": {text: "%s"}
entries:
  - path: ../entries/e
    variants: {prefix: "p\\e", count: 2}
  - path: ../entries/evil
stages:
  - name: "rr\\e[2J"
    planner: round_robin
"""


def test_validate_locates_every_bad_name_and_prints_none_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _entry(tmp_path, "e", _yaml("good"))
    _entry(tmp_path, "evil", _yaml("evil\\e]0;PWNED\\a"))
    configs = tmp_path / "configs"
    configs.mkdir()
    config = configs / "t.yaml"
    arena = ("-" * 32 + "\\n") * 16
    config.write_text(textwrap.dedent(CONFIG) % arena)
    with pytest.raises(ConfigError) as e:
        load_config(config)
    found = {(p.line, p.col): p.message for p in e.value.problems}
    assert "board name 'b\\x071' is not a valid name" in found[(4, 3)]
    assert "variants.prefix: 'p\\x1b' is not a valid name" in found[(7, 24)]
    assert "entry.yaml:1:7: name: entry name 'evil\\x1b]0;PWNED\\x07' is not a valid name" in found[(8, 11)]
    assert "stages[0].name: 'rr\\x1b[2J' is not a valid name" in found[(10, 11)]
    assert cmd_validate(argparse.Namespace(config=str(config))) == 2
    out = capsys.readouterr()
    assert "\x1b" not in out.out + out.err and "\x07" not in out.out + out.err
