"""Workspace tools with Claude Code's names and input schemas: Read, Write, Edit, Glob, Grep,
Bash.

- :mod:`.confinement`: where the file tools may reach (the agent's cwd and extra roots, symlinks
  resolved) and what every workspace tool shares;
- :mod:`.files`: Read, Write, Edit;
- :mod:`.search`: Glob, Grep;
- :mod:`.bash`: Bash, and ``child_env``, the credential-free environment of every process
  teamdeck starts.
"""

from __future__ import annotations

from app.runtime.tools.base import Tool
from app.runtime.tools.workspace.bash import Bash, child_env
from app.runtime.tools.workspace.files import Edit, Read, Write
from app.runtime.tools.workspace.search import Glob, Grep

WORKSPACE_TOOLS: tuple[type[Tool], ...] = (Read, Write, Edit, Glob, Grep, Bash)

__all__ = ["WORKSPACE_TOOLS", "Bash", "Edit", "Glob", "Grep", "Read", "Write", "child_env"]
