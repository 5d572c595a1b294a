"""The person's notifications: through apprise URLs (desktop, ntfy, Slack, email, ``json://``
to a local receiver...), once per event, sent by a worker thread so nothing waits on the
network.

Settings (``notify`` in Claude Code's settings files, the most specific file's keys win; the
command line's ``--notify URL`` adds URLs)::

    {"notify": {"urls": ["ntfy://my-topic"], "after": 20, "bell": true}}

``after``: seconds a request waits for the person before it is told (default 20); ``bell``:
ring the terminal as well. No URL: nothing leaves the machine. A URL apprise does not know, or
a send that fails, is reported (``report``) in one line; never raised.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_AFTER = 20.0


@dataclass(frozen=True)
class NotifySettings:
    urls: tuple[str, ...] = ()
    after: float = DEFAULT_AFTER
    bell: bool = True


def notify_settings(
    files: Iterable[Mapping[str, Any]], extra_urls: Iterable[str] = ()
) -> tuple[NotifySettings, list[str]]:
    """The ``notify`` blocks of ``files`` (lowest precedence first) merged, plus ``extra_urls``;
    and one warning line per bad value (the value is then left out)."""
    merged: dict[str, Any] = {}
    warnings: list[str] = []
    for data in files:
        block = data.get("notify")
        if block is None:
            continue
        if not isinstance(block, dict):
            warnings.append("settings: notify must be an object; ignored")
            continue
        merged.update(block)
    urls: list[str] = []
    raw = merged.get("urls", [])
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, list) and all(isinstance(u, str) for u in raw):
        urls = [u.strip() for u in raw if u.strip()]
    else:
        warnings.append("settings: notify.urls must be a list of URLs; ignored")
    after = merged.get("after", DEFAULT_AFTER)
    if isinstance(after, bool) or not isinstance(after, int | float) or after < 0:
        warnings.append(f"settings: notify.after must be seconds (>= 0), not {after!r}; 20 used")
        after = DEFAULT_AFTER
    bell = merged.get("bell", True)
    if not isinstance(bell, bool):
        warnings.append("settings: notify.bell must be true or false; true used")
        bell = True
    for url in extra_urls:
        if url.strip() and url.strip() not in urls:
            urls.append(url.strip())
    return NotifySettings(tuple(urls), float(after), bell), warnings


#: ``report(key, ok, line)``: how a notification went, in one line (from the worker thread).
Report = Callable[[str, bool, str], None]
#: ``send(urls, title, body)``: None when every URL took it, else why not (one line).
Sender = Callable[[tuple[str, ...], str, str], str | None]


def apprise_send(urls: tuple[str, ...], title: str, body: str) -> str | None:
    """Send through apprise; ``None`` on success, else one line saying why not."""
    import apprise  # heavy: loaded by the worker, the first time something is sent

    bad: list[str] = []
    sender = apprise.Apprise()
    for url in urls:
        if not sender.add(url):
            bad.append(_hide(url))
    unknown = f"apprise does not know the URL {', '.join(bad)}" if bad else None
    if len(sender) == 0:
        return unknown
    with apprise.LogCapture(level=logging.WARNING) as captured:  # type: ignore[no-untyped-call]
        ok = sender.notify(title=title, body=body)
    if ok:
        return unknown  # the others were sent
    lines = [line.strip() for line in captured.getvalue().splitlines() if line.strip()]
    # "2026-11-29 04:27:26,289 - WARNING - A Connection error occurred ...": the words only
    failed = lines[-1].split(" - ")[-1] if lines else "apprise could not deliver it"
    return f"{failed}; {unknown}" if unknown else failed


def _hide(url: str) -> str:
    """A URL as said in the feed: its scheme only (it may carry a token)."""
    scheme, sep, _ = url.partition("://")
    return f"{scheme}://…" if sep else "(not a URL)"


class Notifier:
    """Sends each event once (by ``key``) on a worker thread of its own."""

    def __init__(
        self, settings: NotifySettings, report: Report, send: Sender = apprise_send
    ) -> None:
        self.settings = settings
        self._report = report
        self._send = send
        self._sent: set[str] = set()
        self._queue: queue.Queue[tuple[str, str, str] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def sends(self) -> bool:
        return bool(self.settings.urls)

    def seen(self, key: str) -> bool:
        return key in self._sent

    def notify(self, key: str, title: str, body: str) -> bool:
        """Queue ``title``/``body`` for the URLs unless ``key`` was sent before; ``True`` if
        this is the event's first time (the caller rings the bell then)."""
        with self._lock:
            if key in self._sent:
                return False
            self._sent.add(key)
            if self.settings.urls:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="teamdeck-notify", daemon=True
                    )
                    self._thread.start()
                self._queue.put((key, title, body))
        return True

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            key, title, body = item
            try:
                error = self._send(self.settings.urls, title, body)
            except Exception as exc:  # a plugin's bug: one line, never a crash
                log.exception("notification failed")
                error = f"{type(exc).__name__}: {exc}"
            count = len(self.settings.urls)
            line = (
                f"notified ({count} URL{'s' * (count != 1)}): {title}"
                if error is None
                else f"notification failed: {error}"
            )
            try:
                self._report(key, error is None, line)
            except Exception:
                log.exception("reporting a notification failed")

    def close(self) -> None:
        """Stop the worker once what is queued is sent."""
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
