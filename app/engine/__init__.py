"""The PostgreSQL engine: a team store shared by machines (issue 31).

Its stores satisfy the Protocols of ``app.core.store``, as the files do; the runtime reaches
them only through those, and ``app.engine.choose`` is the one place that picks a backend.
Who may read, send, claim and answer is enforced by the server (``schema/``: one role per
agent, a desk role per team, row-level security), not by these clients.
"""
