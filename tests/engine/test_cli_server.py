"""``teamdeck server init|start|stop|status``, ``invite`` and ``join`` as a new user runs
them: two homes on one box, the second joining over loopback with a one-time URL."""

from __future__ import annotations

import base64
import shutil
import socket
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import pytest

from app.cli.main import main
from app.core.home import Home
from app.core.models import InboxMessage, TeamMember
from app.engine.certificates import authority, make_certificate, names
from app.engine.link import Link
from app.engine.messages import EngineMailbox
from app.engine.server import INSTALL_HINT, find_bin


@pytest.fixture
def homes() -> Iterator[tuple[Path, Path]]:
    if find_bin() is None:
        pytest.skip(f"engine tests need PostgreSQL's programs: {INSTALL_HINT}")
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-cli-"))
    folder.chmod(0o711)  # run as root, the server runs as postgres: it must pass through
    first, second = folder / "first", folder / "second"
    try:
        yield first, second
    finally:
        main(["--home", str(first), "server", "stop"])
        shutil.rmtree(folder, ignore_errors=True)


def test_server_invite_and_join(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = homes
    assert main(["--home", str(first), "server", "init"]) == 0
    assert "running, pid" in capsys.readouterr().out
    settings = first / "engine" / "settings.json"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert main(["--home", str(first), "server", "status"]) == 0
    assert capsys.readouterr().out.startswith("running, pid")

    assert main(["--home", str(first), "invite", "alpha", "--name", "gpu", "--machine", "m2"]) == 0
    url = capsys.readouterr().out.strip()
    assert url.startswith("postgresql://td_alpha_gpu:")

    assert (
        main(["--home", str(second), "join", url, "--folder", str(second), "--register-only"]) == 0
    )
    out = capsys.readouterr().out
    assert "joined team alpha as gpu" in out
    kept = second / "engine" / "alpha.gpu.url"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    # The one-time URL is spent: a second join is refused, in one line.
    assert main(["--home", str(second), "join", url]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "password authentication failed" in err
    # The agent's machine writes to the lead in its files; sync sends it on its own role.
    second_home = Home(second)
    second_home.teams.create("alpha", dedupe=False)
    second_home.teams.add_member("alpha", TeamMember(agent_id="gpu@alpha", name="gpu"))
    second_home.mailbox("alpha").send("team-lead", InboxMessage(sender="gpu", text="ready on m2"))
    assert main(["--home", str(second), "sync", "--team", "alpha", "--once"]) == 0
    assert "sent 1 to the engine" in capsys.readouterr().out
    # ... and the lead's machine copies it into its own team-lead inbox file.
    first_home = Home(first)
    first_home.teams.create("alpha", dedupe=False)
    assert main(["--home", str(first), "sync", "--team", "alpha", "--once"]) == 0
    assert "copied 1 message(s) here" in capsys.readouterr().out
    assert [m.text for m in first_home.mailbox("alpha").read("team-lead")] == ["ready on m2"]

    assert main(["--home", str(first), "server", "stop"]) == 0
    assert main(["--home", str(first), "server", "status"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("stopped")
    assert main(["--home", str(first), "server", "start"]) == 0
    with Link(settings_url(first)) as admin:
        texts = [m.text for m in EngineMailbox(admin, "alpha").read("team-lead")]
    assert texts == ["ready on m2"]


def settings_url(home: Path) -> str:
    import json

    return str(json.loads((home / "engine" / "settings.json").read_text())["url"])


def test_a_join_url_off_loopback_without_tls_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "postgresql://td_alpha_gpu:secret@10.0.0.7:5432/teamdeck"
    assert main(["--home", str(tmp_path / "h"), "join", url]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "without TLS" in err


def test_invite_to_a_managed_server_off_loopback_pins_the_ca_given(
    netns: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A server the inviting home does not run, reached off loopback over TLS (the throwaway
    server on the namespace's host address stands for a provider's): ``invite`` asks for its
    CA in one line, pins the one ``--ca`` gives, and ``join`` checks the server by it."""
    _, address = netns
    folder = Path(tempfile.mkdtemp(prefix="teamdeck-managed-"))
    folder.chmod(0o711)
    provider, lead, far = folder / "provider", folder / "lead", folder / "far"
    try:
        assert main(["--home", str(provider), "server", "init", "--listen", address]) == 0
        ca = folder / "provider-ca.pem"
        shutil.copy(provider / "engine" / "server" / "data" / "ca.crt", ca)  # its CA
        managed = settings_url(provider).replace("@127.0.0.1:", f"@{address}:")
        managed += "?sslmode=require"
        capsys.readouterr()
        invite = ["--home", str(lead), "invite", "alpha", "--name", "gpu", "--engine", managed]
        assert main(invite) == 1
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "--ca FILE" in err and address in err
        assert main([*invite, "--ca", str(folder / "nowhere.pem")]) == 1
        assert "no CA certificate at" in capsys.readouterr().err

        assert main([*invite, "--ca", str(ca)]) == 0
        url = capsys.readouterr().out.strip().splitlines()[-1]
        assert f"@{address}:" in url and "sslmode=verify-ca" in url and "td_cert=" in url
        assert main(["--home", str(far), "join", url, "--folder", str(far), "--register-only"]) == 0
        assert "joined team alpha as gpu" in capsys.readouterr().out
        assert "sslrootcert=" in (far / "engine" / "alpha.gpu.url").read_text()
    finally:
        main(["--home", str(provider), "server", "stop"])
        shutil.rmtree(folder, ignore_errors=True)


def test_a_join_over_tls_checks_the_servers_name_and_a_wrong_certificate_is_one_line(
    homes: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The home's own server, listening beside loopback, presents a certificate naming its
    addresses and its host name: a join to 127.0.0.1 checks them (``verify-full``) over TLS;
    a join URL carrying another certificate is refused in one line."""
    first, second = homes
    assert main(["--home", str(first), "server", "init", "--listen", "127.0.0.2"]) == 0
    crt = first / "engine" / "server" / "data" / "server.crt"
    for host in ("127.0.0.1", "127.0.0.2", socket.gethostname(), "localhost"):
        assert names(crt, host), host
    assert not names(crt, "127.0.0.3")
    invite = ["--home", str(first), "invite", "alpha", "--host", "127.0.0.1", "--name"]
    capsys.readouterr()
    assert main([*invite, "gpu"]) == 0
    url = capsys.readouterr().out.strip().splitlines()[-1]
    assert "@127.0.0.1:" in url and "sslmode=verify-full" in url and "td_cert=" in url
    assert main(["--home", str(second), "join", url, "--register-only"]) == 0
    kept = (second / "engine" / "alpha.gpu.url").read_text().strip()
    assert "sslmode=verify-full" in kept
    with psycopg.connect(kept) as conn:
        row = conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()
    assert row == (True,)

    # An invitation whose certificate is another server's: refused, in one line, and the
    # one-time password is not spent on the wrong server.
    assert main([*invite, "cpu"]) == 0
    url = capsys.readouterr().out.strip().splitlines()[-1]
    other = second / "other"
    other.mkdir()
    make_certificate(other, ["127.0.0.1"])  # another server's, naming the same address
    forged = base64.urlsafe_b64encode(authority(other).read_bytes()).decode()
    query = dict(parse_qsl(urlsplit(url).query)) | {"td_cert": forged}
    bad = urlunsplit(urlsplit(url)._replace(query=urlencode(query)))
    assert main(["--home", str(second / "c"), "join", bad, "--register-only"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not signed by the one the invitation carries" in err
    assert main(["--home", str(second / "c"), "join", url, "--register-only"]) == 0

    # An earlier teamdeck's server: one self-signed certificate naming no address, which its
    # joiners pinned. `server start` makes a certificate naming the addresses, signed by that
    # one: the old pin checks it, host name included.
    data = crt.parent
    assert main(["--home", str(first), "server", "stop"]) == 0
    for name in ("ca.crt", "ca.key", "server.crt", "server.key"):
        (data / name).unlink()
    subprocess.run(["openssl", "req", "-new", "-x509", "-days", "1", "-nodes", "-newkey",
                    "rsa:2048", "-subj", "/CN=old", "-keyout", str(data / "server.key"),
                    "-out", str(crt)], check=True, capture_output=True)  # fmt: skip
    pinned = second / "pinned-before.pem"
    shutil.copy(crt, pinned)
    assert not names(crt, "127.0.0.1")
    assert main(["--home", str(first), "server", "start"]) == 0
    assert names(crt, "127.0.0.1") and names(crt, "127.0.0.2")
    cpu_url = (second / "c" / "engine" / "alpha.cpu.url").read_text().strip()
    assert "sslmode=verify-full" in cpu_url
    with psycopg.connect(cpu_url, sslrootcert=str(pinned)) as conn:  # as a joiner pinned it
        row = conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()
    assert row == (True,)
