"""``teamdeck hook EVENT``: the hook client (``app.runtime.bridge.hook_client``) under the
``teamdeck`` script's name, for hook commands installed by earlier versions of ``teamdeck claude
setup`` (which now installs ``<python> -I -S hook_client.py EVENT``: no ``site``, nothing of
teamdeck's imported, the cheapest start). ``app.cli.entry`` dispatches here before the
``teamdeck`` parser is loaded."""

from __future__ import annotations

from app.runtime.bridge.hook_client import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
