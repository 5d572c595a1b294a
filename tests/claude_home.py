"""A Claude Code home built by hand in Claude Code's exact shapes, for the steering tests.

Every JSON file is written by Node's ``JSON.stringify(x, null, 2)`` (files 0644, folders 0755,
as Claude Code's ``writeFileSync``/``mkdirSync`` leave them under umask 022). The team is a
per-session one (v2.1.178+ names it ``session-<8 hex>``); its lead's inbox holds newer-era
messages (``msgV``/``msg_id``/``type`` envelopes, unknown fields), a plan request from
``researcher`` and a permission request from ``writer``; ``projects/`` holds the transcripts of
the lead's session (named by ``leadSessionId``) and of the researcher's own session.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any

TEAM = "session-98b0b4a7"
LEAD_SESSION = "98b0b4a7-5c1e-4f3a-9d2b-7e6f1a0c4d21"
RESEARCHER_SESSION = "c3d9e1f0-2b4a-4c6d-8e0f-1a2b3c4d5e6f"
PLAN_ID = "plan_approval-1795380000000@researcher"
PERMISSION_ID = "perm-1795380001000-writer"
PROJECT = "/work/demo-project"
LEAD_PROMPT = "Document this project with a small team."

PLAN_TEXT = "## Plan\n1. Read `app/__init__.py`\n2. Write notes to __notes__.md"
PERMISSION_INPUT = {"command": "npm test -- --watch=false", "description": "Run the tests"}
SUGGESTIONS = [
    {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
        "behavior": "allow",
        "destination": "localSettings",
    }
]


def compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def envelope(n: int, **fields: Any) -> dict[str, Any]:
    """A newer-era inbox message: envelope keys first, as observed."""
    return {"type": "message", **fields, "msgV": 1, "msg_id": f"00000000-0000-4000-8000-{n:012d}"}


def files() -> dict[str, Any]:
    """Relative path -> JSON value (``.jsonl`` paths: a list of records, one per line)."""
    config = {
        "name": TEAM,
        "description": "",
        "createdAt": 1795379990000,
        "leadAgentId": f"team-lead@{TEAM}",
        "leadSessionId": LEAD_SESSION,
        "members": [
            {
                "agentId": f"team-lead@{TEAM}",
                "name": "team-lead",
                "agentType": "team-lead",
                "model": "claude-opus-4-7",
                "joinedAt": 1795379990000,
                "tmuxPaneId": "",
                "cwd": PROJECT,
                "subscriptions": [],
            },
            {
                "agentId": f"researcher@{TEAM}",
                "name": "researcher",
                "agentType": "general-purpose",
                "model": "claude-sonnet-4-6",
                "prompt": "Research the codebase.",
                "color": "blue",
                "planModeRequired": True,
                "joinedAt": 1795379991000,
                "tmuxPaneId": "%12",
                "cwd": PROJECT,
                "subscriptions": [],
                "backendType": "tmux",
                "sessionId": RESEARCHER_SESSION,
                "isActive": True,
            },
            {
                "agentId": f"writer@{TEAM}",
                "name": "writer",
                "agentType": "general-purpose",
                "model": "claude-sonnet-4-6",
                "prompt": "Write the docs.",
                "color": "green",
                "planModeRequired": False,
                "joinedAt": 1795379992000,
                "tmuxPaneId": "in-process",
                "cwd": PROJECT,
                "subscriptions": [],
                "backendType": "in-process",
                "isActive": True,
            },
        ],
        "futureTeamField": {"kept": True},
    }
    plan = {
        "type": "plan_approval_request",
        "from": "researcher",
        "timestamp": "2026-11-22T10:00:00.000Z",
        "planFilePath": f"{PROJECT}/.claude/plans/researcher.md",
        "planContent": PLAN_TEXT,
        "requestId": PLAN_ID,
    }
    permission = {
        "type": "permission_request",
        "request_id": PERMISSION_ID,
        "agent_id": f"writer@{TEAM}",
        "tool_name": "Bash",
        "tool_use_id": "toolu_01ABCdef",
        "description": "Run the tests",
        "input": PERMISSION_INPUT,
        "permission_suggestions": SUGGESTIONS,
    }
    lead_inbox = [
        envelope(
            1,
            **{
                "from": "researcher",
                "text": "Starting on the codebase survey.",
                "summary": "starting",
                "timestamp": "2026-11-22T09:59:00.000Z",
                "color": "blue",
                "read": True,
            },
            priority="next",
        ),
        envelope(
            2,
            **{
                "from": "researcher",
                "text": compact(plan),
                "timestamp": "2026-11-22T10:00:00.000Z",
                "color": "blue",
                "read": False,
            },
        ),
        envelope(
            3,
            **{
                "from": "writer",
                "text": compact(permission),
                "timestamp": "2026-11-22T10:00:01.000Z",
                "color": "green",
                "read": False,
            },
        ),
    ]
    researcher_inbox = [
        envelope(
            4,
            **{
                "from": "team-lead",
                "text": "Survey the codebase, plan first.",
                "summary": "your task",
                "timestamp": "2026-11-22T09:58:00.000Z",
                "read": True,
            },
        )
    ]
    writer_inbox = [
        envelope(
            5,
            **{
                "from": "team-lead",
                "text": "Write the docs once research is done.",
                "summary": "your task",
                "timestamp": "2026-11-22T09:58:01.000Z",
                "read": True,
            },
        )
    ]
    task = {
        "id": "1",
        "subject": "Survey the codebase",
        "description": "List the modules",
        "activeForm": "Surveying the codebase",
        "status": "in_progress",
        "owner": "researcher",
        "blocks": [],
        "blockedBy": [],
    }
    transcript = [
        {
            "type": "user",
            "sessionId": RESEARCHER_SESSION,
            "teamName": TEAM,
            "agentName": "researcher",
            "timestamp": "2026-11-22T09:58:30.000Z",
            "message": {"role": "user", "content": "Survey the codebase, plan first."},
        },
        {
            "type": "assistant",
            "sessionId": RESEARCHER_SESSION,
            "teamName": TEAM,
            "agentName": "researcher",
            "timestamp": "2026-11-22T09:58:40.000Z",
            "message": {
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [
                    {"type": "text", "text": "I'll look at the package first."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Read",
                        "input": {"file_path": f"{PROJECT}/app/__init__.py"},
                    },
                ],
                "usage": {
                    "input_tokens": 1200,
                    "output_tokens": 80,
                    "cache_read_input_tokens": 300,
                },
            },
        },
        {
            "type": "user",
            "sessionId": RESEARCHER_SESSION,
            "teamName": TEAM,
            "agentName": "researcher",
            "timestamp": "2026-11-22T09:58:41.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": '"""The package."""\n__version__ = \'1.0\'\n',
                    }
                ],
            },
        },
    ]
    lead_transcript = [
        {
            "type": "user",
            "sessionId": LEAD_SESSION,
            "teamName": TEAM,
            "timestamp": "2026-11-22T09:57:00.000Z",
            "message": {"role": "user", "content": LEAD_PROMPT},
        },
        {
            "type": "assistant",
            "sessionId": LEAD_SESSION,
            "teamName": TEAM,
            "timestamp": "2026-11-22T09:57:10.000Z",
            "message": {
                "id": "msg_lead_1",
                "role": "assistant",
                "model": "claude-opus-4-7",
                "content": [
                    {"type": "text", "text": "I'll spawn a researcher and a writer."},
                    {
                        "type": "tool_use",
                        "id": "toolu_lead_1",
                        "name": "Agent",
                        "input": {"name": "researcher", "prompt": "Research the codebase."},
                    },
                ],
                "usage": {"input_tokens": 5000, "output_tokens": 200},
            },
        },
    ]
    return {
        f"teams/{TEAM}/config.json": config,
        f"teams/{TEAM}/inboxes/team-lead.json": lead_inbox,
        f"teams/{TEAM}/inboxes/researcher.json": researcher_inbox,
        f"teams/{TEAM}/inboxes/writer.json": writer_inbox,
        f"tasks/{TEAM}/1.json": task,
        f"projects/-work-demo-project/{RESEARCHER_SESSION}.jsonl": transcript,
        f"projects/-work-demo-project/{LEAD_SESSION}.jsonl": lead_transcript,
    }


_WRITER = r"""
const fs = require("fs"), path = require("path");
const [root, spec] = process.argv.slice(1);  // node -e: argv[0] is node
for (const [rel, value] of Object.entries(JSON.parse(fs.readFileSync(spec, "utf-8")))) {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  const text = rel.endsWith(".jsonl")
    ? value.map((r) => JSON.stringify(r)).join("\n") + "\n"
    : JSON.stringify(value, null, 2);
  fs.writeFileSync(file, text, { encoding: "utf-8", mode: 0o644 });
}
"""


#: Node's output per input (this process): an output depends on its input only, and a Node
#: start costs a tenth of a second of CPU.
_STRINGIFIED: dict[str, str] = {}


def node_stringify(value: Any) -> str:
    """``JSON.stringify(value, null, 2)`` from Node itself."""
    given = json.dumps(value)
    if given in _STRINGIFIED:
        return _STRINGIFIED[given]
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [
            node,
            "-e",
            "process.stdout.write(JSON.stringify(JSON.parse(require('fs')"
            ".readFileSync(0, 'utf-8')), null, 2))",
        ],
        input=given,
        capture_output=True,
        text=True,
        check=True,
    )
    _STRINGIFIED[given] = done.stdout
    return done.stdout


SEED_TEAM = "docs-team"
SEED_PLAN_ID = "plan_approval-1705334600000@researcher"
SEED_PERMISSION_ID = "perm-1705334700000-ab12cd3"


def seed_era_files() -> dict[str, Any]:
    """A named team of the seed era (v2.1.3x: TeamCreate named it): inbox messages are the
    seeds' plain ``{from, text, summary?, timestamp, color?, read}``, no envelope."""
    member = {
        "joinedAt": 1705334500000,
        "tmuxPaneId": "%3",
        "cwd": PROJECT,
        "subscriptions": [],
        "backendType": "tmux",
    }
    config = {
        "name": SEED_TEAM,
        "description": "Document the project",
        "createdAt": 1705334400000,
        "leadAgentId": f"team-lead@{SEED_TEAM}",
        "leadSessionId": "5e5510a1-0000-4000-8000-000000000001",
        "members": [
            {
                "agentId": f"team-lead@{SEED_TEAM}",
                "name": "team-lead",
                "agentType": "team-lead",
                "model": "claude-opus-4-6",
                "joinedAt": 1705334400000,
                "tmuxPaneId": "",
                "cwd": PROJECT,
                "subscriptions": [],
            },
            {
                "agentId": f"researcher@{SEED_TEAM}",
                "name": "researcher",
                "agentType": "general-purpose",
                "model": "claude-sonnet-4-5",
                "prompt": "Research the codebase.",
                "color": "cyan",
                "planModeRequired": True,
                **member,
            },
            {
                "agentId": f"writer@{SEED_TEAM}",
                "name": "writer",
                "agentType": "general-purpose",
                "model": "claude-sonnet-4-5",
                "prompt": "Write the docs.",
                "color": "magenta",
                "planModeRequired": False,
                **member,
            },
        ],
    }
    plan = {
        "type": "plan_approval_request",
        "from": "researcher",
        "timestamp": "2024-01-15T16:03:20.000Z",
        "planFilePath": f"{PROJECT}/.claude/plans/researcher.md",
        "planContent": PLAN_TEXT,
        "requestId": SEED_PLAN_ID,
    }
    permission = {
        "type": "permission_request",
        "request_id": SEED_PERMISSION_ID,
        "agent_id": "writer",
        "tool_name": "Write",
        "tool_use_id": "toolu_01Seed",
        "description": "Write README.md",
        "input": {"file_path": f"{PROJECT}/README.md", "content": "# Demo\n"},
        "permission_suggestions": [],
    }
    task = {"from": "team-lead", "summary": "your task", "read": True}
    return {
        f"teams/{SEED_TEAM}/config.json": config,
        f"teams/{SEED_TEAM}/inboxes/team-lead.json": [
            {
                "from": "researcher",
                "text": compact(plan),
                "timestamp": "2024-01-15T16:03:20.000Z",
                "color": "cyan",
                "read": False,
            },
            {
                "from": "writer",
                "text": compact(permission),
                "timestamp": "2024-01-15T16:05:00.000Z",
                "color": "magenta",
                "read": False,
            },
        ],
        f"teams/{SEED_TEAM}/inboxes/researcher.json": [
            {**task, "text": "Survey the code.", "timestamp": "2024-01-15T16:01:00.000Z"}
        ],
        f"teams/{SEED_TEAM}/inboxes/writer.json": [
            {**task, "text": "Write the README.", "timestamp": "2024-01-15T16:01:01.000Z"}
        ],
    }


#: The homes Node wrote in this process, per spec: the first build of a spec runs Node, the
#: next ones copy its tree (the same bytes and modes; times of the copy's own, as if written
#: now). Removed when the process exits.
_WRITTEN: dict[str, Path] = {}


def build(root: Path, spec_files: dict[str, Any] | None = None) -> Path:
    """Write the home under ``root`` with Node (see the module docstring; ``spec_files``:
    other files than :func:`files`, e.g. :func:`seed_era_files`); returns ``root``."""
    spec = json.dumps(spec_files or files(), ensure_ascii=False)
    written = _WRITTEN.get(spec)
    if written is None or not written.is_dir():
        folder = Path(tempfile.mkdtemp(prefix="teamdeck-claude-home-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        written = _node_write(folder / "home", spec)
        _WRITTEN[spec] = written
    _copy_tree(written, root)
    return root


def _node_write(root: Path, spec: str) -> Path:
    node = shutil.which("node")
    if node is None:  # pragma: no cover - node is part of the dev environment
        raise RuntimeError("node is needed to build a Claude Code home")
    root.mkdir(parents=True, exist_ok=True)
    spec_path = root.parent / f".{root.name}-spec.json"
    spec_path.write_text(spec, "utf-8")
    old = os.umask(0o022)
    try:
        subprocess.run([node, "-e", _WRITER, str(root), str(spec_path)], check=True)
    finally:
        os.umask(old)
        spec_path.unlink()
    os.chmod(root, 0o755)
    return root


def _copy_tree(source: Path, target: Path) -> None:
    """``source``'s folders and files under ``target``, each with its mode."""
    target.mkdir(parents=True, exist_ok=True)
    os.chmod(target, stat.S_IMODE(source.stat().st_mode))
    for entry in sorted(source.iterdir()):
        into = target / entry.name
        if entry.is_dir():
            _copy_tree(entry, into)
        else:
            shutil.copyfile(entry, into)
            os.chmod(into, stat.S_IMODE(entry.stat().st_mode))


def snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Mode and bytes of everything under ``root`` (folders: mode only)."""
    found: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(root.rglob("*")):
        st = os.lstat(path)
        found[str(path.relative_to(root))] = (
            st.st_mode,
            path.read_bytes() if path.is_file() else None,
        )
    return found
