"""The ``teamdeck`` console script: ``teamdeck hook EVENT`` goes straight to the hook client
(``app.cli.hook``, standard library only: Claude Code runs it for every tool call), everything
else to the full command line (``app.cli.main``), loaded only then."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:2] == ["hook"]:
        from app.cli.hook import main as hook_main

        return hook_main(sys.argv[2:])
    from app.cli.main import main as full_main

    return full_main()


if __name__ == "__main__":
    raise SystemExit(main())
