"""``--cpu-report PREFIX``: the CPU each test burns, to find what makes ``make test`` slow.

The suite is CPU-bound on two cores: wall-clock durations (``--durations``) mostly measure how
long a test waited for the others, not what it cost. With this option each process running
tests (each xdist worker) writes ``PREFIX_<worker>.tsv``: per test its node id, the CPU of the
test's own process (user + system), that of the child processes it reaped (``teamdeck`` CLIs,
teammate processes, Claude Code; not daemons such as a tmux server, and a child reaped later
counts for the later test) and its wall time, in seconds. ``python -m tests.cpu_report
PREFIX`` sums them per module and lists the costliest tests. Nothing is measured without it.
"""

from __future__ import annotations

import glob
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator

import pytest

Row = tuple[str, float, float, float]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-report",
        metavar="PREFIX",
        help="write each test's CPU (own, reaped children) and wall seconds to PREFIX_<worker>.tsv",
    )


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


_rows: list[Row] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if not item.config.getoption("cpu_report"):
        yield
        return
    (own, children), wall = _cpu(), time.monotonic()
    yield
    (own_after, children_after), wall_after = _cpu(), time.monotonic()
    _rows.append((item.nodeid, own_after - own, children_after - children, wall_after - wall))


def pytest_sessionfinish(session: pytest.Session) -> None:
    prefix = session.config.getoption("cpu_report")
    if prefix and _rows:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(f"{prefix}_{worker}.tsv", "w", encoding="utf-8") as out:
            out.writelines(f"{n}\t{o:.3f}\t{c:.3f}\t{w:.3f}\n" for n, o, c, w in _rows)


def summary(prefix: str, top: int = 25) -> str:
    rows: list[Row] = []
    for path in sorted(glob.glob(f"{prefix}_*.tsv")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                fields = line.rstrip("\n").split("\t")
                rows.append((fields[0], float(fields[1]), float(fields[2]), float(fields[3])))
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for nodeid, own, children, wall in rows:
        total = modules[nodeid.split("::", 1)[0]]
        total[0] += own
        total[1] += children
        total[2] += wall
        total[3] += 1
    own_sum, children_sum = sum(r[1] for r in rows), sum(r[2] for r in rows)
    lines = [f"{len(rows)} tests: CPU {own_sum + children_sum:.1f} s "]
    lines[0] += f"(own {own_sum:.1f}, children {children_sum:.1f})"
    lines.append("  cpu    own  child   wall    n  module")
    by_cpu = sorted(modules.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
    for module, (own, children, wall, count) in by_cpu[:top]:
        cpu = own + children
        lines.append(f"{cpu:5.1f} {own:6.1f} {children:6.1f} {wall:6.1f} {count:4.0f}  {module}")
    lines.append("  cpu    own  child   wall  test")
    for nodeid, own, children, wall in sorted(rows, key=lambda r: -(r[1] + r[2]))[:top]:
        lines.append(f"{own + children:5.1f} {own:6.1f} {children:6.1f} {wall:6.1f}  {nodeid}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(sys.argv[1], *(int(a) for a in sys.argv[2:3])))
