"""What an install puts on ``sys.path``: exactly ``app``, ``widgets`` and ``styles`` (the wheel
and the editable install), never ``tests`` or ``bench``; and the package is marked private."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BUILD = """
import sys
from hatchling.build import build_wheel
print(build_wheel(sys.argv[1]))
"""


def test_the_wheel_holds_exactly_app_widgets_styles(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-c", BUILD, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    wheel = tmp_path / built.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        classifiers = archive.read(metadata).decode()
    top = {name.split("/", 1)[0] for name in names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert top - dist_info == {"app", "widgets", "styles"}
    assert "app/runtime/steering.py" in names and "styles/deck.tcss" in names
    assert "Classifier: Private :: Do Not Upload" in classifiers


def test_the_installed_environment_does_not_expose_tests_or_bench(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = """
import importlib.util, sys
for name in ("app", "widgets", "styles", "tests", "bench"):
    print(name, importlib.util.find_spec(name) is not None)
"""
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    found = dict(line.split() for line in result.stdout.splitlines())
    assert found == {
        "app": "True",
        "widgets": "True",
        "styles": "True",
        "tests": "False",
        "bench": "False",
    }
