"""The layer contracts in ``pyproject.toml`` (import-linter) hold, and break when someone adds a
forbidden import: core and runtime never import Textual, the UI modules or the store; widgets
never import the store; no module imports from a layer above it. And no new import cycle
between modules appears (the known ones are listed below and may only go away)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
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
        "app/runtime/agent/loop.py": "import app.dashboard.store",  # runtime -> the UI's files
        "widgets/roster.py": "import app.dashboard.store",  # widget -> the file reader
        "app/display/values.py": "import app.dashboard.screens.host",  # lower -> higher
        "app/runtime/steering.py": "import app.engine.messages",  # past app.engine.choose
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
    assert "0 kept, 6 broken" in report.replace("Contracts: ", "")
    for importer in (
        "app.core.files",
        "app.runtime.agent.loop",
        "widgets.roster",
        "app.display.values",
        "app.runtime.steering",
    ):
        assert importer in report, f"{importer} not reported"


def layer_modules() -> set[str]:
    """Every module or package named in the layers contract of ``pyproject.toml``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [layers] = [c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers"]
    names: set[str] = set()
    for layer in layers["layers"]:
        names.update(n.strip("() ") for n in re.split(r"[|:]", layer))
    return names


def test_every_module_is_in_a_layer() -> None:
    """Nothing escapes the layers contract: a new module must be placed in it."""
    import grimp

    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    placed = layer_modules()
    loose = sorted(
        module
        for module in graph.modules
        if module != "app"  # the package itself (``__version__``)
        and not any(module == n or module.startswith(f"{n}.") for n in placed)
    )
    assert loose == [], f"modules in no layer of pyproject.toml's layers contract: {loose}"


def import_cycles(packages: tuple[str, ...]) -> list[set[str]]:
    """Strongly connected groups of modules (two or more) in the import graph (grimp), counting
    ``if TYPE_CHECKING:`` imports: a type-only circle is still a knot a reader must untie."""
    import grimp

    graph = grimp.build_graph(*packages, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[set[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(group)

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


def test_no_import_cycle() -> None:
    """No circle between modules, not even through imports made only for type checking."""
    assert import_cycles(PACKAGES) == []
