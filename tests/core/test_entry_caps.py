"""What an entry may hold at most (issue 34, item 2): its total apparent size, its count of
files and directories, its depth and a path's length, refused from the listing alone in one
located line at ``tourney validate``; files are streamed, read once, never held whole.
Real files on a real file system, real ``tourney`` processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.domain.entries import EntryPathRefused, directory_digest, load_entry, pack_entry
from runner.domain.entry_tree import EntryCaps, EntryOverCap, check_caps
from runner.domain.packing import artifact_refusal, pack_entry_to
from runner.storage.artifacts import pack_artifact

ROOT = Path(__file__).resolve().parents[2]


def _entry(root: Path, name: str = "big") -> Path:
    d = root / "entries" / name
    d.mkdir(parents=True)
    (d / "entry.yaml").write_text(f"name: {name}\ngame: mnk\nprotocol: mnk\nrun: [sh, main.sh]\n")
    (d / "main.sh").write_text("echo 1 1\n")
    return d


CONFIG = """\
name: caps
game: mnk
boards: {{b: {{text: "4 4 3"}}}}
{limits}entries:
  - path: ../entries/big
  - path: ../entries/small
stages:
  - {{name: rr, planner: round_robin, boards: [b]}}
"""


def _config(root: Path, limits: str = "") -> Path:
    config = root / "configs" / "caps.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(CONFIG.format(limits=limits))
    return config


def _tourney_validate(config: Path) -> tuple[int, str, int]:
    """``tourney validate``'s exit code, output, and the peak memory (KiB) of its process."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner.cli", "validate", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out, usage.ru_maxrss


def test_a_small_entry_holding_a_huge_sparse_file_is_refused_in_one_line_without_reading_it(
    tmp_path: Path,
) -> None:
    """16 KB on disk, 512 MiB of apparent size: refused by its listing, in one located line;
    the old intake read it whole (543 MiB of the organiser's memory)."""
    big = _entry(tmp_path)
    with open(big / "table.bin", "wb") as f:
        f.truncate(512 << 20)
    assert os.stat(big / "table.bin").st_blocks * 512 < 64 << 10  # sparse: nothing on disk
    _entry(tmp_path, "small")
    code, out, peak_kib = _tourney_validate(_config(tmp_path))
    assert code == 2, out
    problems = [line for line in out.splitlines() if "entries[0].path" in line]
    assert len(problems) == 1, out
    assert problems[0].startswith(f"{tmp_path}/configs/caps.yaml:5:11: entries[0].path: ")
    assert "../entries/big/table.bin: the entry's files pass 256 MiB here" in problems[0]
    assert "limits.entry_mb: 256" in problems[0] and str(512 << 20) in problems[0]
    # well under the file's 512 MiB (the old intake peaked at 543-566 MiB); what the interpreter and
    # its imports take varies with the machine (200-300 MiB seen)
    assert peak_kib < 400 << 10, f"validate peaked at {peak_kib} KiB"


def test_the_caps_are_the_configs_own(tmp_path: Path) -> None:
    big = _entry(tmp_path)
    (big / "lib").mkdir()
    for i in range(6):
        (big / "lib" / f"f{i}.txt").write_text("x" * 1000)
    _entry(tmp_path, "small")
    code, out, _ = _tourney_validate(_config(tmp_path, "limits: {entry_files: 5}\n"))
    assert code == 2 and "more than 5 files and directories (limits.entry_files: 5)" in out, out
    code, out, _ = _tourney_validate(_config(tmp_path, "limits: {entry_files: 50, entry_mb: 1}\n"))
    assert code == 0, out  # 6 KB under 1 MiB, 9 files and directories under 50
    code, out, _ = _tourney_validate(_config(tmp_path, "limits: {entry_mb: 0}\n"))
    assert code == 2 and "limits.entry_mb" in out, out  # the schema's own bound, located


def test_depth_and_path_length_are_capped(tmp_path: Path) -> None:
    d = _entry(tmp_path, "deep")
    (d / "a" / "b" / "c" / "d").mkdir(parents=True)
    (d / "a" / "b" / "c" / "d" / "e.txt").write_text("e")
    with pytest.raises(EntryOverCap, match=r"5 levels deep, over 4 \(limits.entry_depth: 4\)") as e:
        check_caps(d, EntryCaps(max_depth=4))
    assert e.value.rel.as_posix() == "a/b/c/d/e.txt"
    check_caps(d, EntryCaps(max_depth=5))
    long = _entry(tmp_path, "long")
    p = long
    for _ in range(5):
        p = p / ("n" * 250)
    p.mkdir(parents=True)
    with pytest.raises(EntryPathRefused, match="holds a path of 1254 bytes under this directory"):
        load_entry(long)  # the default caps: paths of at most 1024 bytes


def test_the_digest_is_of_the_bytes_packed_and_a_rewrite_after_loading_is_refused(tmp_path: Path) -> None:
    d = _entry(tmp_path, "shifty")
    (d / "data.bin").write_bytes(os.urandom(3 << 20))  # several read chunks
    recorded = directory_digest(d)
    with open(tmp_path / "a.tar.gz", "wb") as out:
        assert pack_entry_to(d, out) == recorded
    assert (tmp_path / "a.tar.gz").read_bytes() == pack_entry(d)
    artifacts = tmp_path / "artifacts"
    assert pack_artifact(artifacts, "shifty", d, recorded).path == artifacts / f"{recorded}.tar.gz"
    with open(d / "main.sh", "a") as f:
        f.write("# rewritten\n")
    packed = pack_artifact(artifacts, "shifty", d, "0" * 64)
    assert packed.path == artifacts / f"{'0' * 64}.refused"
    assert packed.refused.startswith("entry shifty: changed after the run read it (digest 000000000000 when")
    assert artifact_refusal(packed.path.read_bytes()) == packed.refused
    assert not list(artifacts.glob("*.tmp"))


def test_an_uploaded_tree_is_checked_by_the_same_caps(tmp_path: Path) -> None:
    """The reusable check (a submission server's intake of an unpacked upload)."""
    up = tmp_path / "upload"
    up.mkdir()
    (up / "x.bin").write_bytes(b"\0" * 2048)
    caps = EntryCaps(max_bytes=1024, names=("max_kb", "max_files", "max_depth"))
    with pytest.raises(EntryOverCap, match=r"max_kb"):
        check_caps(up, caps)
    check_caps(up, EntryCaps())
