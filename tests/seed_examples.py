"""The seeds' example files, verbatim (seed 000's inbox, seed 001's team config).

Shared by the compatibility tests and the CLI tests, which read and show them.
"""

# seed 000, "Each inbox is a JSON array of messages:"
SEED_INBOX = """[
  {
    "from": "team-lead",
    "text": "Please implement the auth module",
    "summary": "Implement auth module",
    "timestamp": "2025-01-15T10:30:00.000Z",
    "color": "cyan",
    "read": false
  },
  {
    "from": "researcher",
    "text": "{\\"type\\":\\"shutdown_request\\",\\"requestId\\":\\"shutdown-1234@researcher\\",\\"from\\":\\"team-lead\\"}",
    "timestamp": "2025-01-15T11:00:00.000Z",
    "color": "magenta",
    "read": true
  }
]"""  # noqa: E501

# seed 001, "Example JSON" (team config)
SEED_CONFIG = """{
  "name": "my-team",
  "description": "Working on feature X",
  "createdAt": 1705334400000,
  "leadAgentId": "uuid-1234-5678",
  "leadSessionId": "session-abcd",
  "members": [
    {
      "agentId": "uuid-1234-5678",
      "name": "team-lead",
      "agentType": "team-lead",
      "model": "claude-sonnet-4-5",
      "joinedAt": 1705334400000,
      "tmuxPaneId": "",
      "cwd": "/home/user/project",
      "subscriptions": [],
      "color": "blue"
    },
    {
      "agentId": "uuid-researcher",
      "name": "researcher",
      "agentType": "researcher",
      "model": "claude-sonnet-4-5",
      "joinedAt": 1705334500000,
      "cwd": "/home/user/project",
      "color": "cyan",
      "planModeRequired": false,
      "allowedTools": ["Read", "Grep", "Glob"]
    }
  ]
}"""
