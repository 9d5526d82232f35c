"""What an entry may hold (issue 25 item 1): regular files and directories only.

A link (wherever it points), a hard link, a fifo, socket or device anywhere in
an entry, or an entry root that is itself a link, is refused with the path
that breaks the rule; nothing behind it is ever read. Empty directories are
packed and in the digest. Real files on a real file system; the one race test
stands in for the swap with a patched ``os.stat``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import socket
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

from runner.commands.validate import cmd_validate
from runner.domain.entries import EntryPathRefused, directory_digest, load_entry, pack_entry, unpack_entry
from runner.domain.entry_tree import RefusedPath, walk_entry
from tests import forked_cli

ROOT = Path(__file__).resolve().parents[2]
RULE = "entries hold regular files and directories only"
SECRET = "organiser-secret-4f1c"


def _entry(root: Path, name: str = "x") -> Path:
    d = root / "entries" / name
    d.mkdir(parents=True)
    (d / "entry.yaml").write_text(f"name: {name}\ngame: boxing\nprotocol: potm-arena\nrun: [sh, main.sh]\n")
    (d / "main.sh").write_text("cat opp.c >&2\n")
    return d


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    s = tmp_path / "outside" / "run.key"
    s.parent.mkdir()
    s.write_text(SECRET)
    return s


def _refused(d: Path) -> RefusedPath:
    with pytest.raises(EntryPathRefused) as e:
        load_entry(d)
    return e.value.refused


def test_a_link_out_of_the_entry_is_refused_and_never_read(tmp_path: Path, secret: Path) -> None:
    d = _entry(tmp_path)
    (d / "opp.c").symlink_to(secret)
    r = _refused(d)
    assert str(r) == f"{d}/opp.c: a symbolic link (to {secret}); {RULE}"
    for make in (pack_entry, directory_digest):
        with pytest.raises(RefusedPath):
            make(d)


@pytest.mark.parametrize("target", ["main.sh", "nowhere/at/all", "../x/main.sh"])
def test_links_inside_dangling_or_in_subdirectories_are_refused(tmp_path: Path, target: str) -> None:
    d = _entry(tmp_path)
    (d / "lib" / "deep").mkdir(parents=True)
    (d / "lib" / "deep" / "l").symlink_to(target)
    assert str(_refused(d)) == f"{d}/lib/deep/l: a symbolic link (to {target}); {RULE}"


def test_a_linked_directory_is_refused(tmp_path: Path, secret: Path) -> None:
    d = _entry(tmp_path)
    (d / "support").symlink_to(secret.parent, target_is_directory=True)
    assert _refused(d).rel.as_posix() == "support"


def test_an_entry_root_that_is_a_link_is_refused(tmp_path: Path) -> None:
    real = _entry(tmp_path, "real")
    link = tmp_path / "entries" / "alias"
    link.symlink_to(real, target_is_directory=True)
    r = _refused(link)
    assert str(r) == f"{link}: a symbolic link (to {real}); {RULE}"


def test_a_hard_link_is_refused_saying_why(tmp_path: Path, secret: Path) -> None:
    d = _entry(tmp_path)
    os.link(secret, d / "opp.c")
    r = _refused(d)
    assert r.rel.as_posix() == "opp.c"
    assert "a hard link (2 names for one file)" in r.what
    assert "cannot tell where else the file lives" in r.what


def test_fifos_sockets_and_devices_are_refused(tmp_path: Path) -> None:
    d = _entry(tmp_path)
    os.mkfifo(d / "pipe")  # a plain open would block: the walk must not
    assert str(_refused(d)) == f"{d}/pipe: a fifo; {RULE}"
    (d / "pipe").unlink()
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(d / "sock"))
        assert _refused(d).what == f"a socket; {RULE}"
    (d / "sock").unlink()
    os.mknod(d / "null", 0o600 | 0o020000, os.makedev(1, 3))  # we run as root here (see README)
    assert _refused(d).what == f"a device; {RULE}"


def test_a_directory_swapped_for_a_link_after_listing_is_refused(
    tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: the listing's lstat saw a directory, the name is a link by the time it is opened."""
    d = _entry(tmp_path)
    (d / "lib").symlink_to(secret.parent, target_is_directory=True)
    real_stat = os.stat
    dir_st = real_stat(d)

    def stale_stat(path: object, *, dir_fd: int | None = None, follow_symlinks: bool = True) -> object:
        if path == "lib" and not follow_symlinks:
            return dir_st  # what the listing saw before the swap
        return real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", stale_stat)
    with pytest.raises(RefusedPath) as e:
        walk_entry(d)
    assert e.value.rel.as_posix() == "lib"


def test_empty_directories_are_packed_and_in_the_digest(tmp_path: Path) -> None:
    d = _entry(tmp_path)
    before = directory_digest(d)
    (d / "support").mkdir()
    with_support = directory_digest(d)
    assert with_support != before
    out = tmp_path / "unpacked"
    unpack_entry(pack_entry(d), out)
    assert (out / "support").is_dir() and list((out / "support").iterdir()) == []
    assert directory_digest(out) == with_support


def _digest_before_issue_25(root: Path) -> str:
    """The digest as it was computed before empty directories counted (files only)."""
    h = hashlib.sha256()
    files = sorted((p for p in root.rglob("*") if p.is_file()), key=lambda p: p.relative_to(root).as_posix())
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(b"x" if os.access(p, os.X_OK) else b"-")
        data = p.read_bytes()
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def test_entries_without_empty_directories_keep_their_digests() -> None:
    """A rerun of an older run still finds its entries' code unchanged."""
    for d in (ROOT / "entries" / "boxing" / "sprague", ROOT / "entries" / "gomoku" / "threats"):
        assert directory_digest(d) == _digest_before_issue_25(d), d


def test_a_forged_artifact_holding_a_link_does_not_unpack(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("opp.c")
        info.type = tarfile.SYMTYPE
        info.linkname = "main.sh"  # even pointing inside: the packer never makes one
        tar.addfile(info)
    with pytest.raises(tarfile.TarError, match=r"opp\.c: not a regular file or directory"):
        unpack_entry(buf.getvalue(), tmp_path / "out")


CONFIG = """\
name: t
game: boxing
boards:
  B: {file: boards/arena.txt}
entries:
  - path: ../entries/x
  - path: ../entries/y
stages:
  - name: rr
    planner: round_robin
    boards: [B]
"""


def test_validate_and_play_refuse_with_a_located_error_and_no_traceback(
    tmp_path: Path, secret: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x = _entry(tmp_path, "x")
    _entry(tmp_path, "y")
    (x / "opp.c").symlink_to(secret)
    boards = tmp_path / "configs" / "boards"
    boards.mkdir(parents=True)
    (boards / "arena.txt").symlink_to(secret)
    config = tmp_path / "configs" / "t.yaml"
    config.write_text(textwrap.dedent(CONFIG))
    assert cmd_validate(argparse.Namespace(config=str(config))) == 2
    out = capsys.readouterr().out
    link = f"a symbolic link (to {secret}); {RULE}"
    assert f"{config}:4:13: boards.B.file: board 'B': boards/arena.txt: {link}" in out
    assert f"{config}:6:11: entries[0].path: ../entries/x/opp.c: {link}" in out
    assert SECRET not in out
    (x / "opp.c").unlink()
    (x / "opp.c").symlink_to("/nonexistent/dangling")  # it used to be a traceback
    env = {**os.environ, "TOURNEY_CACHE_DIR": str(tmp_path / "cache")}
    play = ["play", "--game", "boxing", str(x), str(tmp_path / "entries" / "y")]
    for argv in (["validate", str(config)], play):
        proc = forked_cli.run(
            [sys.executable, "-m", "runner.cli", *argv], capture_output=True, text=True, env=env, timeout=60
        )
        assert proc.returncode == 2, proc
        text = proc.stdout + proc.stderr
        assert "Traceback" not in text and "opp.c: a symbolic link (to /nonexistent/dangling)" in text, text
