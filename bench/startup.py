"""Start-up: how long the ``teamdeck`` commands take to start, each against a baseline measured
in the same run.

    .venv/bin/python bench/startup.py [--quick] [--json] [--rounds N] [--frames N]
                                      [--teamdeck "python -m app.cli.main"]

Every command is a fresh process, run round-robin with its baseline (the machine is shared: the
load hits both alike), and each keeps its median wall time. Rows (issue 21):

* ``teamdeck --help`` against ``python -c "import pydantic"`` (the same interpreter and venv).
  Target <= 2x.
* ``teamdeck team list`` (a home with three teams) against the same baseline. Target <= 3x.
* ``teamdeck history`` and ``teamdeck approvals``: the same ratio, for context (no target).
* what each of those commands imports (``python -X importtime``): the number of modules, and
  whether the model client (``anthropic``, ``httpx2``), Textual or ``sqlite3`` is among them.
  Target: no model client in any of them.
* the dashboard's first frame: ``teamdeck`` on an empty home, offline, in a pseudo-terminal of
  120x40; the app writes the seconds from its process's start to its first painted frame to
  ``$TEAMDECK_FIRST_FRAME`` (see ``app.dashboard.app``). Against a bare Textual app with one
  line of text, measured the same way. Target <= 2 s on a quiet machine (the load average is
  printed: on a loaded machine the figure is context only).

Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "python -c 'import pydantic'"
HEAVY = ("anthropic", "httpx2", "textual", "sqlite3")
MODEL_CLIENT = ("anthropic", "httpx2")

#: A bare Textual app that reports its first frame the way the dashboard does.
BARE_APP = """
import os, time
from textual.app import App
from textual.widgets import Static

def age():
    with open("/proc/self/stat") as fh:
        start = int(fh.read().rsplit(")", 1)[1].split()[19])
    return time.clock_gettime(time.CLOCK_BOOTTIME) - start / os.sysconf("SC_CLK_TCK")

class Bare(App):
    def compose(self):
        yield Static("teamdeck")
    def on_mount(self):
        self.call_after_refresh(self.painted)
    def painted(self):
        with open(os.environ["TEAMDECK_FIRST_FRAME"], "a") as fh:
            fh.write(f"{age():.3f}\\n")

Bare().run()
"""


@dataclass
class Row:
    name: str
    value: float
    baseline: float
    baseline_name: str
    target: float | None
    unit: str = "ms"

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("inf")

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        return (self.value if self.unit == "s" else self.ratio) <= self.target


@dataclass
class Imports:
    command: str
    modules: int
    heavy: list[str]

    @property
    def met(self) -> bool:
        return not any(name in self.heavy for name in MODEL_CLIENT)


#: ``--teamdeck``: the command measured (e.g. ``python -m app.cli.main`` run in another checkout).
COMMAND: list[str] = []


def teamdeck() -> list[str]:
    """The console script next to this interpreter (what a person runs), else ``-m``."""
    if COMMAND:
        return list(COMMAND)
    script = Path(sys.executable).parent / "teamdeck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.cli.main"]


def command_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["TEAMDECK_HOME"] = str(home)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def wall(argv: Sequence[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    return elapsed * 1000


def imports(argv: Sequence[str], env: dict[str, str]) -> tuple[int, list[str]]:
    script = argv[1:] if argv[0] == sys.executable else argv
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *script], env=env, capture_output=True, text=True
    )
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)$", done.stderr, re.M)
    return len(names), [name for name in HEAVY if name in names]


def make_home(root: Path) -> Path:
    home = root / "home"
    for name in ("alpha", "beta", "gamma"):
        subprocess.run(
            [*teamdeck(), "--home", str(home), "team", "create", name, "--description", name],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return home


def first_frame(
    argv: Sequence[str],
    env: dict[str, str],
    report: Path,
    limit: float,
    before_stop: Callable[[int], None] | None = None,
    settle: float = 0.0,
) -> float:
    """Seconds from the process's start to its first frame, as it reports it; run in a
    pseudo-terminal of 120x40, stopped (SIGTERM) once it has reported and ``settle`` more
    seconds have passed (the terminal kept drained), ``before_stop(pid)`` first: e.g. to
    read its peak RSS."""
    import fcntl
    import termios

    report.unlink(missing_ok=True)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**env, "TEAMDECK_FIRST_FRAME": str(report), "TERM": "xterm-256color"}
    proc = subprocess.Popen(
        list(argv), stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    os.read(master, 65536)  # keep the terminal drained
                except OSError:
                    break
            if report.exists() and report.read_text().strip():
                _drain(master, settle)
                return float(report.read_text().split()[0])
        raise SystemExit(f"{' '.join(argv)}: no first frame within {limit:.0f} s")
    finally:
        if before_stop is not None:
            before_stop(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            end = time.monotonic() + 15
            while proc.poll() is None and time.monotonic() < end:
                if select.select([master], [], [], 0.05)[0]:
                    try:
                        os.read(master, 65536)
                    except OSError:
                        break
            proc.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)


def _drain(master: int, seconds: float) -> None:
    """Keep reading the terminal for ``seconds`` (the app goes on drawing meanwhile)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if select.select([master], [], [], 0.05)[0]:
            try:
                os.read(master, 65536)
            except OSError:
                return


def median_pair(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def measure(args: argparse.Namespace, work: Path) -> tuple[list[Row], list[Imports]]:
    home = make_home(work)
    env = command_env(home)
    base = [sys.executable, "-c", "import pydantic"]
    commands = {
        "teamdeck --help": ([*teamdeck(), "--help"], 2.0),
        "teamdeck team list": ([*teamdeck(), "team", "list"], 3.0),
        "teamdeck history": ([*teamdeck(), "history"], None),
        "teamdeck approvals": ([*teamdeck(), "approvals"], None),
    }
    for argv, _ in commands.values():  # warm the file cache and the bytecode
        wall(argv, env)
    wall(base, env)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, (argv, _) in commands.items():
            baseline = wall(base, env)
            samples[name].append((wall(argv, env), baseline))
    rows = []
    for name, (_, target) in commands.items():
        value, baseline = median_pair(samples[name])
        rows.append(Row(name, value, baseline, BASELINE, target))
    found = [Imports(name, *imports(argv, env)) for name, (argv, _) in commands.items()]

    if args.frames:  # --frames 0: the commands only
        rows.append(dashboard_row(args, work, env))
    return rows, found


def dashboard_row(args: argparse.Namespace, work: Path, env: dict[str, str]) -> Row:
    dashboard_env = {**env, "TEAMDECK_HOME": str(work / "dashboard-home")}
    report = work / "first-frame"
    frames: list[tuple[float, float]] = []
    for _ in range(args.frames):
        bare = first_frame([sys.executable, "-c", BARE_APP], env, report, args.limit)
        frames.append((first_frame(teamdeck(), dashboard_env, report, args.limit), bare))
    value, baseline = median_pair(frames)
    return Row("dashboard first frame", value, baseline, "a bare Textual app", 2.0, "s")


def print_table(rows: list[Row], found: list[Imports]) -> None:
    print(f"{'row':<24} {'value':>10} {'baseline':>10} {'ratio':>6} {'target':>8}  met  baseline")
    for row in rows:
        scale = 1 if row.unit == "ms" else 1
        value = f"{row.value * scale:.0f} ms" if row.unit == "ms" else f"{row.value:.2f} s"
        base = f"{row.baseline:.0f} ms" if row.unit == "ms" else f"{row.baseline:.2f} s"
        if row.target is None:
            target = "-"
        else:
            target = f"<= {row.target:g}x" if row.unit == "ms" else f"<= {row.target:g} s"
        met = {True: "yes", False: "NO", None: "-"}[row.met]
        line = f"{row.name:<24} {value:>10} {base:>10} {row.ratio:>5.2f}x {target:>8}  {met:<4}"
        print(f"{line} {row.baseline_name}")
    print()
    print(f"{'imports of':<24} {'modules':>8}  {'heavy modules loaded':<32} model client")
    for item in found:
        heavy = ", ".join(item.heavy) or "-"
        print(f"{item.command:<24} {item.modules:>8}  {heavy:<32} {'no' if item.met else 'YES'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--rounds", type=int, help="runs of each command (default 21, quick 7)")
    parser.add_argument("--frames", type=int, help="dashboard starts (default 5, quick 2; 0: none)")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds to wait for a frame")
    parser.add_argument("--teamdeck", metavar="CMD", help="the command to measure (default: "
                        "the teamdeck script next to this python)")  # fmt: skip
    args = parser.parse_args()
    if args.teamdeck:
        COMMAND[:] = [sys.executable if w == "python" else w for w in args.teamdeck.split()]
    args.rounds = args.rounds or (7 if args.quick else 21)
    if args.frames is None:
        args.frames = 2 if args.quick else 5
    load = os.getloadavg()[0]
    if not args.json:
        print(f"teamdeck start-up, {time.strftime('%Y-%m-%d %H:%M')}, load {load:.1f}")
        print(f"{args.rounds} runs per command, {args.frames} dashboard starts (medians)\n")
    work = Path(tempfile.mkdtemp(prefix="teamdeck-startup-"))
    try:
        rows, found = measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    missed = [r for r in rows if r.met is False] + [f for f in found if not f.met]
    if args.json:
        out = [{**asdict(r), "ratio": r.ratio, "met": r.met} for r in rows]
        imported = [{**asdict(f), "met": f.met} for f in found]
        print(
            json.dumps(
                {"rows": out, "imports": imported, "missed": len(missed), "load": load}, indent=2
            )
        )
    else:
        print_table(rows, found)
        print(f"\n{len(missed)} target(s) missed; load now {os.getloadavg()[0]:.1f}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
