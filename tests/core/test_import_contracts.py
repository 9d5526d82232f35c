"""The layers of docs/architecture.md, enforced: ``lint-imports`` (import-linter) checks the
contracts in pyproject.toml (``[tool.importlinter]``) on every ``make test``.

import-linter rather than more AST walking in test_layers.py: it builds the whole import
graph (function-local and TYPE_CHECKING imports included), finds cycles between packages
and names the import that would break each, and reports every broken arrow as
``importer -> imported (l.N)``; the contracts read as the layer table does.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def test_every_import_contract_is_kept() -> None:
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    # every contract was checked and kept (a contract that silently dropped out would not be)
    assert f"Contracts: {len(contracts)} kept, 0 broken." in done.stdout


def test_the_layer_contract_is_the_architecture_table() -> None:
    """The contract's layers and docs/architecture.md's table list the same packages, in order."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = (c["layers"] for c in contracts if c["id"] == "layers")
    table = (ROOT / "docs" / "architecture.md").read_text().split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[2].strip() for line in table.splitlines() if line.startswith("| ")][1:]
    documented = [p.strip("`") for row in rows for p in row.split(", ") if p.startswith("`runner")]
    assert documented == list(reversed(layers))


def test_every_part_of_runner_sits_in_a_layer() -> None:
    """A new package or module directly under runner/ must be given its layer in the contract
    (import-linter checks only the modules its layers name)."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = (c["layers"] for c in contracts if c["id"] == "layers")
    parts = {
        f"runner.{p.stem}"
        for p in (ROOT / "runner").iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()
    }
    assert parts == set(layers)
