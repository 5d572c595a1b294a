"""The security tests' fixtures: the same agents' project and home as the runtime tests'."""

from tests.runtime.conftest import home, project, runtimes  # noqa: F401 (fixtures, used by name)
