"""Start-up of the hook client Claude Code runs for every hook event (``teamdeck hook EVENT``).

    .venv/bin/python bench/hook.py [--runs N]

With no teamdeck listening (the hook must then return at once, with no output), it times, as the
median wall time of ``--runs`` runs each (interleaved, so a busy moment hits all alike):

* ``python -c pass`` and ``python -c "import json, socket"`` (the floor: an interpreter, and one
  that loaded what the client needs);
* ``teamdeck hook PermissionRequest`` (the console script ``teamdeck claude setup`` installs);
* ``python -I -m app.cli.hook PermissionRequest`` (the fallback command setup installs when no
  ``teamdeck`` script sits next to the Python).

Target (issue 20): <= 150 ms on a quiet machine. Exit status 1 if the script's median misses it.
It also prints the client's heaviest imports (``-X importtime``) so a regression is easy to find.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 150.0
EVENT = (
    b'{"session_id":"0123456789abcdef","hook_event_name":"PermissionRequest",'
    b'"tool_name":"Bash","tool_input":{"command":"true"}}'
)


def _time(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, input=EVENT, capture_output=True, env=env, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0 or done.stdout:
        raise SystemExit(f"{command}: exit {done.returncode}, stdout {done.stdout!r}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    python = sys.executable
    script = str(Path(python).parent / "teamdeck")
    commands = {
        "python -c pass": [python, "-c", "pass"],
        'python -c "import json, socket"': [python, "-c", "import json, socket"],
        "teamdeck hook PermissionRequest": [script, "hook", "PermissionRequest"],
        "python -I -m app.cli.hook": [python, "-I", "-m", "app.cli.hook", "PermissionRequest"],
    }
    with tempfile.TemporaryDirectory(prefix="teamdeck-bench-hook-") as home:
        env = {**os.environ, "TEAMDECK_HOME": home}  # nobody listens there
        times: dict[str, list[float]] = {name: [] for name in commands}
        for command in commands.values():
            _time(command, env)  # warm the page cache
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(_time(command, env))
        trace = subprocess.run(
            [python, "-X", "importtime", "-I", "-m", "app.cli.hook", "PermissionRequest"],
            input=EVENT,
            capture_output=True,
            env=env,
            check=False,
        ).stderr.decode()
    print(f"hook client start-up, no teamdeck listening (median of {args.runs} runs)")
    for name, values in times.items():
        print(f"  {name:<34} {statistics.median(values):7.1f} ms  (min {min(values):.1f})")
    rows = []
    for line in trace.splitlines()[1:]:
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    print("heaviest imports of python -I -m app.cli.hook (cumulative us):")
    for cumulative, module in sorted(rows, reverse=True)[:6]:
        print(f"  {cumulative:8d}  {module}")
    script_ms = statistics.median(times["teamdeck hook PermissionRequest"])
    verdict = "met" if script_ms <= TARGET_MS else "MISSED"
    print(f"target <= {TARGET_MS:.0f} ms for teamdeck hook: {verdict} ({script_ms:.1f} ms)")
    return 0 if script_ms <= TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
