"""The files as one machine's projection of the engine: messages.

On each machine the team's files stay what its agents, Claude Code's teammates, hooks and
local tools read and write. ``Projection`` keeps them and the engine in step for one team:

* **pull**: every message the engine holds for a member who runs on this machine (``local``)
  is appended to that member's inbox file, in the engine's order, once. The last seq copied
  is kept in ``{home}/engine/cursors/{team}.json``, written after the append: a crash between
  the two could copy a message again, so a message equal to one already in the file (sender,
  timestamp and text) is not appended twice.
* **push**: what this machine's agents wrote into the inbox file of a member who runs
  elsewhere is sent to the engine, with a uuid derived from the team, the recipient and the
  entry's index in the file: pushing again (after a crash, a failed commit, or by another
  pass) sends nothing twice. Each entry goes out on its sender's own link (``links``): the
  server checks that the sender is the role's own member, so an entry written in another's
  name is not forwarded (it is counted in ``refused``).

Signed frames cross machines as the engine's word, never as a signature: each home signs with
its own team key (``app.core.authority``), which never leaves it. A frame this home's key
signed (a teammate runtime's request, the desk's answer or shutdown request) goes out with its
origin in the entry's ``teamdeckEngine`` field; the other home signs it again with its own key
only when the server's identity stands behind it: an answer only from ``team-lead`` (only the
desk's role may send as the lead: row-level security), a request only from the member that
raised it (the sender is the role's own). Anything else arrives as the plain text it is.
"""

from __future__ import annotations

import functools
import json
import uuid as uuidlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.core.authority import DECIDERS, RUNTIME, TeamKey
from app.core.errors import CorruptFileError
from app.core.files import atomic_write_json
from app.core.home import Home
from app.core.models import InboxMessage
from app.core.paths import LEAD_NAME
from app.core.protocol import parse_frame
from app.engine.errors import AccessRefusedError
from app.engine.link import Link
from app.engine.messages import EngineMailbox

NAMESPACE = uuidlib.UUID("6f1f3c52-5b9e-4d43-9d7a-2b1e4f0c7a10")
MARK = "teamdeckEngine"
#: Frames only the desk's word may make act on a teammate; frames only a teammate's runtime
#: raises (the lead's side).
_ANSWERS = {"permission_response", "plan_approval_response", "shutdown_request"}
_REQUESTS = {"permission_request", "plan_approval_request", "shutdown_approved"}


def outgoing(key: TeamKey | None, recipient: str, message: InboxMessage) -> InboxMessage:
    """``message`` as it leaves for the engine: a frame this home's key signed goes with its
    origin marked and without the signature (the other home cannot check it anyway)."""
    out = InboxMessage.model_validate(message.to_json_dict())
    extra = out.model_extra if out.model_extra is not None else {}
    extra.pop(MARK, None)
    origin = key.check(message.text, to=recipient) if key is not None else None
    if origin is not None:
        data = json.loads(message.text)
        data.pop("teamdeckAuthority", None)
        out.text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        extra[MARK] = origin
    return out


def incoming(key: TeamKey | None, recipient: str, message: InboxMessage) -> InboxMessage:
    """A message from the engine as this home's files take it: signed again with this home's
    key when its mark is backed by the sender's identity (see the module docstring)."""
    extra = message.model_extra if message.model_extra is not None else {}
    origin = extra.pop(MARK, None)
    frame = parse_frame(message.text)
    if key is None or frame is None or not isinstance(origin, str):
        return message
    kind = frame.type
    from_desk = message.sender == LEAD_NAME and kind in _ANSWERS and origin in DECIDERS | {RUNTIME}
    from_runtime = kind in _REQUESTS and origin == RUNTIME and message.sender != LEAD_NAME
    if from_desk or from_runtime:
        message.text = key.sign_text(message.text, to=recipient, origin=origin)
    return message


@dataclass
class Projection:
    home: Home
    team: str
    local: set[str]
    """Members (and ``team-lead``/``user`` on the lead's machine) whose inboxes live here."""
    reader: Link
    """The link the engine is read through (a role that may read the local inboxes)."""
    links: Mapping[str, Link] = field(default_factory=dict)
    """Sender name -> the link its messages go out on."""
    refused: int = 0
    key: TeamKey | None = None
    """This home's team key: signed frames cross as the engine's word (module docstring)."""
    arriving: Callable[[str, InboxMessage], None] | None = None
    """Called with each message before it is appended to a local inbox file."""
    ready: Callable[[str, int], list[tuple[int, InboxMessage]] | None] | None = None
    """The messages of a local inbox after a seq, as the engine's feed read them on its
    wake (``Pace.take``), or ``None``: :meth:`pull` reads them itself then."""
    mirrors: bool = False
    """The desk's: :meth:`mirror` copies what remote members send each other here (an entry
    in a remote member's file from another remote member is then not counted as refused)."""

    @property
    def _cursor_path(self) -> Path:
        return self.home.root / "engine" / "cursors" / f"{self.team}.json"

    def _cursors(self) -> dict[str, dict[str, int]]:
        try:
            data = json.loads(self._cursor_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except (OSError, ValueError) as exc:
            raise CorruptFileError(self._cursor_path, str(exc)) from None
        return {part: dict(data.get(part, {})) for part in ("pulled", "pushed", "mirrored")}

    def _save(self, cursors: dict[str, dict[str, int]]) -> None:
        atomic_write_json(self._cursor_path, cursors)

    def _save_pushed(self, name: str, count: int) -> None:
        """The push cursor of ``name`` moved to ``count``, the file's other cursors as they
        are now (this runs once the sends are committed: a pull or a mirror may have moved
        theirs meanwhile)."""
        cursors = self._cursors()
        cursors["pushed"][name] = count
        self._save(cursors)

    # ------------------------------------------------------------------ pull

    def pull(self) -> int:
        """Copy the engine's new messages for the local members into their files; how many."""
        cursors = self._cursors()
        engine = EngineMailbox(self.reader, self.team)
        files = self.home.mailbox(self.team)
        copied = 0
        for name in sorted(self.local):
            start = cursors["pulled"].get(name, 0)
            new = self.ready(name, start) if self.ready is not None else None
            if new is None:
                new = engine.since(name, start)
            if not new:
                continue
            seen = {(m.sender, m.timestamp, m.text) for m in files.read(name)}
            for seq, message in new:
                message.read = False
                message = incoming(self.key, name, message)
                if (message.sender, message.timestamp, message.text) not in seen:
                    if self.arriving is not None:
                        self.arriving(name, message)
                    files.append(name, message)
                    copied += 1
                cursors["pulled"][name] = seq
                self._save(cursors)
        return copied

    # ------------------------------------------------------------------ mirror

    def mirror(self, remote: set[str]) -> int:
        """The desk's side: what a member running elsewhere sent to another member running
        elsewhere (two joined machines) is copied into the recipient's inbox file here, once
        and in order, so this machine's dashboard shows it in its feed as any message. Only
        the record: nobody reads that file here, :meth:`push` never sends it back (its sender
        runs elsewhere), and it is not signed again (no frame in it acts here)."""
        cursors = self._cursors()
        engine = EngineMailbox(self.reader, self.team)
        files = self.home.mailbox(self.team)
        copied = 0
        for name in sorted(remote - self.local):
            start = cursors["mirrored"].get(name, 0)
            new = [(seq, m) for seq, m in engine.since(name, start)]
            if not new:
                continue
            seen = {(m.sender, m.timestamp, m.text) for m in files.read(name)}
            for seq, message in new:
                message = incoming(None, name, message)
                elsewhere = message.sender in remote and message.sender != name
                if elsewhere and (message.sender, message.timestamp, message.text) not in seen:
                    message.read = False
                    files.append(name, message)
                    copied += 1
                cursors["mirrored"][name] = seq
            self._save(cursors)
        return copied

    # ------------------------------------------------------------------ push

    def push(self, remote: set[str]) -> int:
        """Send what was written here into the files of ``remote`` members; how many sent."""
        cursors = self._cursors()
        files = self.home.mailbox(self.team)
        sent = 0
        for name in sorted(remote - self.local):
            entries = files.read(name)
            start = cursors["pushed"].get(name, 0)
            if start >= len(entries):
                continue
            for index in range(start, len(entries)):
                message = entries[index]
                link = self.links.get(message.sender)
                if link is None and self.mirrors and message.sender in remote - {name}:
                    pass  # its own machine sent it (:meth:`mirror` copied it here)
                elif link is None:
                    self.refused += 1
                else:
                    key = uuidlib.uuid5(NAMESPACE, f"{self.team}/{name}/{index}")
                    out = outgoing(self.key, name, message)
                    try:
                        if EngineMailbox(link, self.team).append(name, out, uuid=str(key)):
                            sent += 1
                    except AccessRefusedError:
                        self.refused += 1
            # Once the sends are committed (a relay's pass sends in one transaction): a cursor
            # saved before would skip entries a failed commit never delivered.
            self.reader.settled(functools.partial(self._save_pushed, name, len(entries)))
        return sent
