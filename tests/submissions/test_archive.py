"""Hostile archives: every member checked before anything is written, caps on every size."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from runner.submissions.archive import ArchiveRefused, Caps, unpack_archive

CAPS = Caps(max_unpacked=1024 * 1024, max_files=50, max_depth=4)


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as t:  # type: ignore[call-overload]
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def _file(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def _special(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info, b""


def _refused(archive: Path, tmp_path: Path, match: str) -> None:
    dest = tmp_path / "out"
    with pytest.raises(ArchiveRefused, match=match):
        unpack_archive(archive, dest, CAPS)
    assert not dest.exists()  # nothing written, not even the directory
    # nothing written beside it either (a traversal would land in tmp_path or above)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["in", archive.name] if archive.parent == tmp_path else ["in"]
    )


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    return tmp_path / "in"


def test_a_good_tar_gz_unpacks_with_its_executable_bit(tmp_path: Path, inbox: Path) -> None:
    archive = _tar(
        inbox / "a.tgz", [_file("./runme", b"#!/bin/sh\n", 0o755), _file("src/main.c", b"int main;")]
    )
    members = unpack_archive(archive, tmp_path / "out", CAPS)
    assert {str(m.path) for m in members} == {"runme", "src/main.c"}
    assert os.access(tmp_path / "out" / "runme", os.X_OK)
    assert (tmp_path / "out" / "src" / "main.c").read_bytes() == b"int main;"


def test_plain_tar_and_zip_unpack(tmp_path: Path, inbox: Path) -> None:
    unpack_archive(_tar(inbox / "a.tar", [_file("main.c", b"c")], "w"), tmp_path / "t", CAPS)
    with zipfile.ZipFile(inbox / "a.zip", "w") as z:
        z.writestr("dir/main.py", "print(1)")
    unpack_archive(inbox / "a.zip", tmp_path / "z", CAPS)
    assert (tmp_path / "t" / "main.c").read_bytes() == b"c"
    assert (tmp_path / "z" / "dir" / "main.py").read_text() == "print(1)"


@pytest.mark.parametrize(
    ("member", "match"),
    [
        (_file("/etc/passwd"), "absolute path"),
        (_file("../../evil"), r"'\.\.'"),
        (_file("ok/../../evil"), r"'\.\.'"),
        (_special("link", tarfile.SYMTYPE, "/etc/shadow"), "symbolic link"),
        (_special("hard", tarfile.LNKTYPE, "runme"), "hard link"),
        (_special("dev", tarfile.CHRTYPE), "device"),
        (_special("fifo", tarfile.FIFOTYPE), "fifo"),
        (_file("-rf"), "top-level name"),
        (_file("a\x1b[2Jb"), "control character"),
        (_file("a/b/c/d/e"), "nested 5 deep"),
    ],
)
def test_a_hostile_member_refuses_the_whole_archive_before_anything_is_written(
    tmp_path: Path, inbox: Path, member: tuple[tarfile.TarInfo, bytes], match: str
) -> None:
    # a good member first: it must not be written either
    archive = _tar(inbox / "a.tgz", [_file("runme", b"ok"), member])
    _refused(archive, tmp_path, match)


def test_a_header_claiming_a_huge_size_is_refused_without_reading_it(tmp_path: Path, inbox: Path) -> None:
    info = tarfile.TarInfo("big")
    info.size = 50 * 1024**3  # 50 GiB claimed; the archive holds a few bytes
    raw = info.tobuf(format=tarfile.GNU_FORMAT) + b"x" * 512
    (inbox / "a.tar").write_bytes(raw)
    _refused(inbox / "a.tar", tmp_path, "would exceed")


def test_a_gzip_bomb_is_stopped_at_the_cap(tmp_path: Path, inbox: Path) -> None:
    zeros = b"\0" * (3 * 1024 * 1024)
    archive = _tar(inbox / "bomb.tgz", [_file("a", zeros)])
    assert archive.stat().st_size < 20_000  # a tiny upload that would unpack to 3 MiB
    _refused(archive, tmp_path, "would exceed")


def test_many_small_members_past_the_cap_are_refused(tmp_path: Path, inbox: Path) -> None:
    chunk = b"\0" * (300 * 1024)
    archive = _tar(inbox / "a.tgz", [_file(f"f{i}", chunk) for i in range(5)])
    _refused(archive, tmp_path, "would exceed")


def test_a_zip_bomb_is_refused_by_its_total(tmp_path: Path, inbox: Path) -> None:
    with zipfile.ZipFile(inbox / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(4):
            z.writestr(f"f{i}", b"\0" * (400 * 1024))
    _refused(inbox / "bomb.zip", tmp_path, "would exceed")


def test_a_zip_symlink_and_traversal_are_refused(tmp_path: Path, inbox: Path) -> None:
    with zipfile.ZipFile(inbox / "l.zip", "w") as z:
        info = zipfile.ZipInfo("link")
        info.external_attr = (0o120777) << 16
        z.writestr(info, "/etc/shadow")
    _refused(inbox / "l.zip", tmp_path, "symbolic link")
    with zipfile.ZipFile(inbox / "t.zip", "w") as z:
        z.writestr("../evil", "x")
    _refused(inbox / "t.zip", tmp_path, r"'\.\.'")


def test_too_many_members_are_refused(tmp_path: Path, inbox: Path) -> None:
    archive = _tar(inbox / "a.tgz", [_file(f"f{i}") for i in range(51)])
    _refused(archive, tmp_path, "more than 50 members")


def test_a_truncated_archive_is_refused_and_leaves_nothing(tmp_path: Path, inbox: Path) -> None:
    data = os.urandom(200_000)
    archive = _tar(inbox / "a.tar", [_file("runme", b"ok"), _file("blob", data)], "w")
    (inbox / "cut.tar").write_bytes(archive.read_bytes()[:100_000])
    _refused(inbox / "cut.tar", tmp_path, "truncated")
    archive = _tar(inbox / "b.tgz", [_file("runme", b"ok"), _file("blob", data)])
    (inbox / "cut.tgz").write_bytes(archive.read_bytes()[:100_000])
    _refused(inbox / "cut.tgz", tmp_path, "truncated|corrupt")


def test_not_an_archive_is_refused(tmp_path: Path, inbox: Path) -> None:
    (inbox / "x.tgz").write_text("just text")
    _refused(inbox / "x.tgz", tmp_path, "not a .tar.gz")
