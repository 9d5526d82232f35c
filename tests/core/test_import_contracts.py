"""The layers of docs/architecture.md, enforced: ``lint-imports`` (import-linter) checks the
contracts in pyproject.toml (``[tool.importlinter]``) on every ``make test``.

import-linter rather than more AST walking in test_layers.py: it builds the whole import
graph (function-local and TYPE_CHECKING imports included), finds cycles between packages
and names the import that would break each, and reports every broken arrow as
``importer -> imported (l.N)``; the contracts read as the layer table does.
"""

from __future__ import annotations

import ast
import re
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


#: modules whose function-local imports still wait for their reasons: the worker identity and
#: dispatch rework of issue 27 item 1 is changing them; remove a name once it says why (or imports at the top)
AWAITING_REASONS = frozenset({"workers/tasks.py", "workers/worker_cli.py"})


def says_why(lines: list[str], row: int) -> bool:
    """Whether the import at ``lines[row]`` or the comments above it, up through its group of
    imports (blank lines and comments between them), say ``# local: <reason>``."""
    while row >= 0:
        line = lines[row].strip()
        if "# local: " in line:
            return True
        if line and not line.startswith(("#", "from ", "import ")):
            return False
        row -= 1
    return False


INDENTED_PROJECT_IMPORT = re.compile(r"^[ \t]+(?:from[ \t]+|import[ \t].*?)\b(?:runner|workers)\b", re.M)


def unexplained_local_imports(root: Path = ROOT) -> dict[str, list[int]]:
    """Each import of a project module inside a function that does not say why it is there."""
    found: dict[str, list[int]] = {}
    for package in ("runner", "workers"):
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if not INDENTED_PROJECT_IMPORT.search(text):
                continue  # a function's imports are indented: parsing every module is slow
            lines = text.splitlines()
            for func in ast.walk(ast.parse(text)):
                if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(func):
                    if isinstance(node, ast.Import):
                        names = [a.name for a in node.names]
                    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                        names = [node.module]
                    else:
                        continue
                    ours = any(n.split(".")[0] in ("runner", "workers") for n in names)
                    if ours and not says_why(lines, node.lineno - 1):
                        found.setdefault(str(path.relative_to(root)), []).append(node.lineno)
    return found


def test_every_function_local_import_says_why() -> None:
    """A project import inside a function hides an arrow: it stays there only where it buys
    start-up time or breaks a cycle, and says which (docs/architecture.md, "Layers")."""
    unexplained = {p: rows for p, rows in unexplained_local_imports().items() if p not in AWAITING_REASONS}
    assert unexplained == {}, "import at the top, or say `# local: <reason>` above the import"


def test_the_modules_awaiting_reasons_still_lack_them_so_the_list_only_shrinks() -> None:
    assert sorted(AWAITING_REASONS - set(unexplained_local_imports())) == []
