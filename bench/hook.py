"""Cost of the hook command Claude Code runs for every hook event of every agent.

    .venv/bin/python bench/hook.py [--runs N]

Times, as the median wall time of ``--runs`` runs each (interleaved, so a busy moment hits all
alike), against the baseline measured in the same run, a bare ``python -I -c pass``:

* the hook command ``teamdeck claude setup`` installs (``python -I -S hook_client.py EVENT``)
  with a teamdeck listening, for an event it does not hold (``PostToolUse``, and the
  ``PreToolUse`` of a ``Read``): handed over, no reply awaited;
* the same with nobody listening (no secret: it returns at once);
* a held ``PermissionRequest`` answered by the listener as soon as it arrives (the round trip:
  no polling, the answer is pushed);
* the older ``teamdeck hook EVENT`` console script, for comparison.

Target (issue 29): a non-held event costs at most 1.5x the baseline. Exit status 1 if missed.
It also prints the client's imports (``-X importtime``) so a regression is easy to find.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.runtime.bridge import install, wire  # noqa: E402
from app.runtime.bridge.server import Bridge, BridgeServer  # noqa: E402

TARGET = 1.5
BASE = {"session_id": "0123456789abcdef", "cwd": "/tmp", "transcript_path": "/tmp/t.jsonl"}
EVENTS = {
    "PostToolUse": {**BASE, "tool_name": "Bash", "tool_input": {"command": "true"}},
    "PreToolUse": {**BASE, "tool_name": "Read", "tool_input": {"file_path": "/tmp/x"}},
    "PermissionRequest": {**BASE, "tool_name": "Bash", "tool_input": {"command": "true"}},
}


def _time(command: list[str], payload: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, input=payload, capture_output=True, env=env, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"{command}: exit {done.returncode}, stderr {done.stderr!r}")
    return elapsed


def _answer_at_once(bridge: Bridge, stop: threading.Event) -> None:
    while not stop.is_set():
        for approval in bridge.pending():
            bridge.answer(approval.request_id, allow=True)
        time.sleep(0.0005)


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    python = sys.executable
    hook = shlex.split(install.hook_command("EVENT"))[:-1]
    script = str(Path(python).parent / "teamdeck")
    payload = {name: json.dumps(data).encode() for name, data in EVENTS.items()}
    rows: dict[str, tuple[list[str], bytes, str]] = {
        "python -I -c pass (baseline)": ([python, "-I", "-c", "pass"], b"", "listening"),
        "hook PostToolUse, listening": (
            [*hook, "PostToolUse"],
            payload["PostToolUse"],
            "listening",
        ),
        "hook PreToolUse Read, listening": (
            [*hook, "PreToolUse"],
            payload["PreToolUse"],
            "listening",
        ),
        "hook PostToolUse, nobody listening": (
            [*hook, "PostToolUse"],
            payload["PostToolUse"],
            "none",
        ),
        "hook PermissionRequest, held+answered": (
            [*hook, "PermissionRequest"],
            payload["PermissionRequest"],
            "listening",
        ),
        "teamdeck hook PostToolUse (script)": (
            [script, "hook", "PostToolUse"],
            payload["PostToolUse"],
            "listening",
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in rows}
    with (
        tempfile.TemporaryDirectory(prefix="td-hook-") as served_home,
        tempfile.TemporaryDirectory(prefix="td-hook-none-") as empty_home,
    ):
        envs = {
            "listening": {**os.environ, "TEAMDECK_HOME": served_home},
            "none": {**os.environ, "TEAMDECK_HOME": empty_home},
        }
        bridge = Bridge()
        stop = threading.Event()
        answerer = threading.Thread(target=_answer_at_once, args=(bridge, stop), daemon=True)
        with BridgeServer(bridge, wire.socket_path(Path(served_home))):
            answerer.start()
            for command, data, where in rows.values():
                _time(command, data, envs[where])  # warm the page cache
            for _ in range(args.runs):
                for name, (command, data, where) in rows.items():
                    times[name].append(_time(command, data, envs[where]))
            stop.set()
        trace = subprocess.run(
            [python, "-X", "importtime", *hook[1:], "PostToolUse"],
            input=payload["PostToolUse"],
            capture_output=True,
            env=envs["none"],
            check=False,
        ).stderr.decode()
    load = os.getloadavg()
    print(f"hook command cost (median of {args.runs} runs; load {load[0]:.2f} {load[1]:.2f})")
    print(f"  installed command: {' '.join(hook)} EVENT")
    base = statistics.median(times["python -I -c pass (baseline)"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<40} {median:7.1f} ms  {median / base:5.2f}x  (min {min(values):.1f})")
    modules = [line.split("|")[-1].strip() for line in trace.splitlines()[1:] if "|" in line]
    print(f"modules the client imports under -I -S: {len(modules)}")
    worst = max(
        statistics.median(times["hook PostToolUse, listening"]),
        statistics.median(times["hook PreToolUse Read, listening"]),
    )
    verdict = "met" if worst <= TARGET * base else "MISSED"
    print(f"target: a non-held event <= {TARGET}x the baseline: {verdict} ({worst / base:.2f}x)")
    return 0 if worst <= TARGET * base else 1


if __name__ == "__main__":
    raise SystemExit(main())
