"""Run a module of another tree of this project with this venv (its editable install set aside).

    .venv/bin/python bench/run_tree.py TREE MODULE [ARGS...]

TREE is a checkout or ``git archive`` of another commit; MODULE runs as ``python -m MODULE``
would, importing ``runner``, ``workers`` and ``bench`` from TREE. For paired comparisons of
two commits in one venv (the editable install's finder would otherwise import this tree).
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    tree, module, *args = sys.argv[1:]
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, os.path.abspath(tree))
    os.chdir(tree)
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
