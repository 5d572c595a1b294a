"""The hook bridge: Claude Code's hook commands hand their events to a running teamdeck.

``wire`` is what both ends share (the socket's place, one JSON line each way; standard library
only, so the hook client starts fast); ``answers`` builds the JSON Claude Code accepts on a
hook's stdout; ``hold`` says which tool calls wait for a person; ``server`` listens and keeps
the requests; ``client`` lists and answers them from another process; ``install`` puts
teamdeck's hook commands into a Claude Code settings file and takes them out again.
"""
