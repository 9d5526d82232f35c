"""What an upload must hold, by the contest's ``submissions.layout``, and the entry it becomes.

- ``icfp98`` (seed 003, "Submission details"): an executable ``runme``, a ``readme`` signed with
  at least one person's name and email address, ``src/`` with the sources, and optionally
  ``support/``; nothing else at the top. The server writes its ``entry.yaml``: the game's
  protocol, ``run: [./runme]`` (run with ``support/``'s parent as working directory, as the seed
  says), the config's ``submissions.build`` if any.
- ``potm`` (seed 002, "You send me source code"): one source file whose suffix the config's
  ``languages`` names (built and run as it says), or a directory with an ``entry.yaml``.
- ``plugin``: a directory with an ``entry.yaml`` for the config's game.

Whichever it is, the tree then goes through the same intake as an entry directory on the
organiser's disk (``runner.domain.entries.load_entry``: no links, fifos, devices or hard links,
a valid ``entry.yaml``), under the team's name: the entry's name in a run is its team's.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from runner.config.submission_rules import SubmissionsModel
from runner.domain.entries import EntryError, EntrySpec, load_entry, read_entry_yaml
from runner.domain.games import same_game
from runner.domain.names import entry_name_problem
from runner.errors import UsageError

ICFP_TOP = frozenset({"runme", "readme", "src", "support"})
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
README_MAX = 256 * 1024


class LayoutRefused(UsageError, ValueError):
    """An upload that does not have the contest's layout: one line saying what is missing."""


@dataclass(frozen=True)
class Intake:
    """An upload made an entry: its directory and the spec the intake read from it."""

    root: Path
    spec: EntrySpec


def _signed(readme: Path) -> bool:
    """A readme that names a person and an email address on one line (seed 003's "signed")."""
    if readme.stat().st_size > README_MAX:
        return False
    for line in readme.read_text(errors="replace").splitlines():
        m = EMAIL.search(line)
        if m is None:
            continue
        rest = (line[: m.start()] + " " + line[m.end() :]).replace("<", " ").replace(">", " ")
        if any(len(w) >= 2 and w.isalpha() for w in rest.split()):
            return True
    return False


def _icfp98(root: Path) -> None:
    names = {p.name for p in root.iterdir()}
    extra = sorted(names - ICFP_TOP)
    if extra:
        raise LayoutRefused(
            f"unexpected {extra[0]!r} at the top: an icfp98 submission holds runme, readme, src/ and "
            "optionally support/"
        )
    runme, readme, src = root / "runme", root / "readme", root / "src"
    if not runme.is_file():
        raise LayoutRefused("no runme: the executable driver program must be at the top of the archive")
    if not runme.stat().st_mode & 0o100:
        raise LayoutRefused("runme is not executable (chmod +x runme before packing)")
    if not readme.is_file():
        raise LayoutRefused("no readme: a text file signed with the team members' names and email addresses")
    if not _signed(readme):
        raise LayoutRefused(
            "readme must be signed with the team members' names and email addresses (no line names a "
            "person and an email address)"
        )
    if not src.is_dir() or not any(p.is_file() for p in src.rglob("*")):
        raise LayoutRefused("no src/ with the source files")
    if (root / "support").exists() and not (root / "support").is_dir():
        raise LayoutRefused("support must be a directory")


def _write_entry_yaml(root: Path, fields: dict[str, object]) -> None:
    (root / "entry.yaml").write_text(yaml.safe_dump(fields, sort_keys=False))


def _own_entry_yaml(root: Path, team: str, game: str) -> None:
    """A contestant's own ``entry.yaml``, checked, and renamed to the team (variants dropped:
    a team plays one program)."""
    try:
        model = read_entry_yaml(root)
    except EntryError as e:
        raise LayoutRefused(str(e).replace(str(root) + "/", "")) from None
    if not same_game(model.game, game):
        raise LayoutRefused(f"entry.yaml: game {model.game!r}, but this contest plays {game!r}")
    fields = model.model_dump(exclude_defaults=True, exclude={"variants"})
    fields["name"] = team
    _write_entry_yaml(root, fields)


def _one_file(root: Path, rules: SubmissionsModel, team: str, game: str, protocol: str) -> bool:
    """A one-file POTM submission: give it its ``entry.yaml`` (True), or say it is not one."""
    files = [p for p in root.iterdir()]
    if len(files) != 1 or not files[0].is_file():
        return False
    name = files[0].name
    suffix = name.rsplit(".", 1)[-1] if "." in name else ""
    language = rules.languages.get(suffix)
    if language is None:
        known = ", ".join(f".{s}" for s in rules.languages)
        raise LayoutRefused(f"{name}: not a source file this contest builds (known: {known})")
    fields: dict[str, object] = {"name": team, "game": game, "protocol": protocol}
    if language.build:
        fields["build"] = language.build.replace("{file}", name)
    fields["run"] = [a.replace("{file}", name) for a in language.run]
    _write_entry_yaml(root, fields)
    return True


def take_in(root: Path, rules: SubmissionsModel, *, team: str, game: str, protocol: str) -> Intake:
    """Check ``root`` (an unpacked upload) against the layout, give it the ``entry.yaml`` it
    needs, and read it as an entry directory; ``LayoutRefused`` or the intake's ``EntryError``
    (one line) if it cannot play."""
    if entry_name_problem(team, "team name"):
        raise LayoutRefused(f"team {team!r} cannot name an entry")
    if rules.layout == "icfp98":
        _icfp98(root)
        fields: dict[str, object] = {"name": team, "game": game, "protocol": protocol, "run": ["./runme"]}
        if rules.build:
            fields["build"] = rules.build
        _write_entry_yaml(root, fields)
    elif (root / "entry.yaml").is_file():
        _own_entry_yaml(root, team, game)
    elif rules.layout == "potm":
        if not _one_file(root, rules, team, game, protocol):
            raise LayoutRefused("a potm submission is one source file, or a directory with entry.yaml")
    else:
        raise LayoutRefused("no entry.yaml at the top: a submission is a directory with entry.yaml")
    try:
        (spec,) = load_entry(root)
    except EntryError as e:
        raise LayoutRefused(
            str(e).replace(str(root.resolve()) + "/", "").replace(str(root) + "/", "")
        ) from None
    return Intake(root, spec)


def single_file_upload(upload: Path, name: str, dest: Path) -> Path:
    """A bare uploaded file (POTM's one source file) placed alone in the new directory ``dest``."""
    dest.mkdir(mode=0o700)
    shutil.copyfile(upload, dest / name)
    return dest
