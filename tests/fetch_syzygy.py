"""Fetch the 3-piece Syzygy WDL tables the tablebase tests use (tourney ships no tables).

They come from python-chess's own source distribution on PyPI (its ``data/syzygy/regular``
test tables), fetched with pip, the ordinary client, for the version installed here:

    .venv/bin/python -m tests.fetch_syzygy          # into ~/.cache/tourney/syzygy-3

Tests find them there or in ``$TOURNEY_SYZYGY_DIR`` and skip, saying this command, without them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import chess

THREE_PIECE_WDL = ("KQvK", "KRvK", "KBvK", "KNvK", "KPvK")
DEFAULT_DIR = Path.home() / ".cache" / "tourney" / "syzygy-3"


def syzygy_dir() -> Path | None:
    """Where the tables are, or None."""
    d = Path(os.environ.get("TOURNEY_SYZYGY_DIR") or DEFAULT_DIR)
    return d if all((d / f"{t}.rtbw").is_file() for t in THREE_PIECE_WDL) else None


def main() -> int:
    DEFAULT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"chess=={chess.__version__}"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", spec, "--no-deps", "--no-binary", ":all:", "-d", tmp],
            check=True,
        )
        (sdist,) = Path(tmp).glob("chess-*.tar.gz")
        with tarfile.open(sdist) as tar:
            for member in tar.getmembers():
                name = Path(member.name)
                if name.parent.name == "regular" and name.stem in THREE_PIECE_WDL and name.suffix == ".rtbw":
                    data = tar.extractfile(member)
                    assert data is not None
                    (DEFAULT_DIR / name.name).write_bytes(data.read())
    print(f"{DEFAULT_DIR}: {', '.join(sorted(p.name for p in DEFAULT_DIR.glob('*.rtbw')))}")
    return 0 if syzygy_dir() else 1


if __name__ == "__main__":
    sys.exit(main())
