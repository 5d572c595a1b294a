"""The layer contracts in ``pyproject.toml`` (import-linter) hold, and break when someone adds a
forbidden import: core and runtime never import Textual, the UI modules or the store; widgets
never import the store; no module imports from a layer above it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "widgets", "styles")

LINT = """
import sys
from importlinter.cli import lint_imports
sys.exit(lint_imports(config_filename="pyproject.toml", no_cache=True, no_logo=True))
"""


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter on the packages under ``root`` (found there first on ``sys.path``)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, "-c", LINT],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_contracts_hold() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_forbidden_import_breaks_its_contract(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    bad = {
        "app/core/files.py": "import textual.widget",  # core -> Textual
        "app/runtime/loop.py": "import app.store",  # runtime -> the file reader of the UI
        "widgets/roster.py": "import app.store",  # widget -> the file reader
        "app/view_state.py": "import app.screens.host",  # a lower layer -> a higher one (a cycle)
    }
    for path, line in bad.items():
        with (tmp_path / path).open("a", encoding="utf-8") as file:
            file.write(f"\n{line}  # noqa\n")
    probe = subprocess.run(
        [sys.executable, "-c", "import app; print(app.__file__)"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert probe.stdout.strip() == str(tmp_path / "app" / "__init__.py")  # the copy is linted
    result = lint(tmp_path)
    report = result.stdout
    assert result.returncode == 1, report + result.stderr
    assert "0 kept, 4 broken" in report.replace("Contracts: ", "")
    for importer in ("app.core.files", "app.runtime.loop", "widgets.roster", "app.view_state"):
        assert importer in report, f"{importer} not reported"
