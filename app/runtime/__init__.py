"""Agent runtime: the model client, the agent loop, tools and the team supervisor (no Textual)."""
