"""Settings for the whole suite.

No test writes into the working tree: Hypothesis would keep its example
database and cached source constants in ``./.hypothesis``; its home is the
system temp directory instead (failing examples are still replayed from there
on the next run).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis.configuration import set_hypothesis_home_dir

set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "tourney-hypothesis"))
