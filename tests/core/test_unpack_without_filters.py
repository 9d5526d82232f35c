"""Unpacking an artifact on a Python without tarfile's extraction filters (Debian 12's 3.11.2:
``extractall(filter=...)`` is 3.11.4's): the same refusals, by the fallback's own checks."""

from __future__ import annotations

import contextlib
import io
import tarfile
from pathlib import Path

import pytest

from runner.domain.packing import pack_entry, unpack_entry


def _tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buf.getvalue()


@pytest.fixture(params=["filters", "no filters"])
def python(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "no filters":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    return str(request.param)


def test_an_entry_unpacks_with_its_modes(tmp_path: Path, python: str) -> None:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "run.sh").write_text("#!/bin/sh\necho 1 1\n")
    (src / "run.sh").chmod(0o755)
    (src / "sub" / "data.txt").write_text("x")
    unpack_entry(pack_entry(src), tmp_path / "out")
    assert (tmp_path / "out" / "sub" / "data.txt").read_text() == "x"
    assert (tmp_path / "out" / "run.sh").stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize("kind", ["symlink", "dotdot", "absolute", "setuid"])
def test_a_forged_artifact_is_refused_or_defused(tmp_path: Path, python: str, kind: str) -> None:
    info = tarfile.TarInfo("ok.txt")
    data = b"x"
    if kind == "symlink":
        info = tarfile.TarInfo("link")
        info.type, info.linkname, data = tarfile.SYMTYPE, "/etc/passwd", b""
    elif kind == "dotdot":
        info = tarfile.TarInfo("../escaped.txt")
    elif kind == "absolute":
        info = tarfile.TarInfo(str(tmp_path / "abs.txt"))
    else:
        info.mode = 0o4777
    info.size = len(data)
    out = tmp_path / "out"
    if kind == "absolute":  # refused (the fallback) or put under ``out`` (data_filter): never there
        with contextlib.suppress(tarfile.TarError):
            unpack_entry(_tar([(info, data)]), out)
        assert not (tmp_path / "abs.txt").exists()
        return
    if kind == "setuid":
        unpack_entry(_tar([(info, data)]), out)
        assert (out / "ok.txt").stat().st_mode & 0o7777 == 0o755  # no set-id, no world write
        return
    with pytest.raises(tarfile.TarError):
        unpack_entry(_tar([(info, data)]), out)
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "abs.txt").exists()
    assert not (out / "link").exists()
