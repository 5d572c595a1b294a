"""A local PostgreSQL for people who have none: ``teamdeck server init|start|stop|status``.

It lives in one folder (``{home}/engine/server`` for the CLI, a temporary one for the tests):
``data/`` (initdb's cluster), ``run/`` (its private Unix socket folder), ``server.log``,
``admin.url`` (the administrator's URL with its password, mode 0600). The administrator
``teamdeck`` is the cluster's superuser and owns the schema; every login uses scram-sha-256.
It listens on 127.0.0.1 by default; listening elsewhere turns TLS on with a generated
self-signed certificate (``data/server.crt``), and only TLS connections are accepted there.

PostgreSQL refuses to run as root. Run as root (CI is), the server runs as the ``postgres``
user that Debian's package creates: the folder is given to it and the programs are started
through ``setpriv``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from app.engine.certificates import WILDCARDS, make_certificate, names
from app.engine.errors import EngineError
from app.engine.link import make_url
from app.engine.programs import INSTALL_HINT, alive, find_bin, run_as

__all__ = ["ADMIN", "DATABASE", "INSTALL_HINT", "LocalServer", "find_bin", "free_port"]

ADMIN = "teamdeck"
DATABASE = "teamdeck"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalServer:
    folder: Path
    port: int = 0
    listen: str = "127.0.0.1"
    child: bool = False
    """Run the server as this process's child (the tests: a ``kill -9`` is reaped at once,
    where a detached server's would wait for init to reap it) instead of through pg_ctl."""
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def sockets(self) -> Path:
        return self.folder / "run"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    @property
    def admin_file(self) -> Path:
        return self.folder / "admin.url"

    def _bin(self, program: str) -> str:
        folder = find_bin()
        if folder is None:
            raise EngineError(f"PostgreSQL's programs were not found: {INSTALL_HINT}")
        return str(folder / program)

    def _command(self, argv: list[str]) -> list[str]:
        who = run_as()
        if who is None:
            return argv
        uid, gid = who
        return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--init-groups", "--", *argv]

    def _give(self, path: Path) -> None:
        who = run_as()
        if who is not None:
            os.chown(path, *who)

    def _check_reachable(self) -> None:
        """Run as another user, PostgreSQL must be able to pass through every parent."""
        who = run_as()
        if who is None:
            return
        uid, gid = who
        for parent in self.folder.resolve().parents:
            st = parent.stat()
            bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
            if not st.st_mode & bit:
                raise EngineError(
                    f"PostgreSQL runs as the postgres user here (it refuses root), and it cannot "
                    f"enter {parent}: put the server in a folder it can reach"
                )

    # ------------------------------------------------------------------ init

    def init(self, *, nosync: bool = False) -> str:
        """Create the cluster, its administrator and the database; the admin URL."""
        if (self.data / "PG_VERSION").exists():
            raise EngineError(f"a server is already set up in {self.folder}")
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.folder.chmod(0o700)
        self._check_reachable()
        self._give(self.folder)
        self.sockets.mkdir(exist_ok=True, mode=0o700)
        self._give(self.sockets)
        password = secrets.token_urlsafe(32)
        pwfile = self.folder / ".initdb-pw"
        pwfile.write_text(password + "\n", encoding="utf-8")
        pwfile.chmod(0o600)
        self._give(pwfile)
        argv = [
            self._bin("initdb"),
            "-D",
            str(self.data),
            "-U",
            ADMIN,
            f"--pwfile={pwfile}",
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ]
        if nosync:
            argv.append("--no-sync")
        try:
            done = subprocess.run(
                self._command(argv), capture_output=True, text=True, cwd=self.folder, check=False
            )
        finally:
            pwfile.unlink(missing_ok=True)
        if done.returncode != 0:
            last = (done.stderr or done.stdout).strip().splitlines()
            raise EngineError(f"initdb failed: {last[-1] if last else done.returncode}")
        self._start_on_a_port()
        url = make_url(
            {
                "host": "127.0.0.1",
                "port": self.port,
                "user": ADMIN,
                "password": password,
                "dbname": DATABASE,
            }
        )
        self.admin_file.write_text(url + "\n", encoding="utf-8")
        self.admin_file.chmod(0o600)
        with psycopg.connect(url, dbname="postgres", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        from app.engine.migrate import migrate

        with psycopg.connect(url, autocommit=True) as conn:
            migrate(conn)
        return url

    def _start_on_a_port(self) -> None:
        """Configure and start; a free port taken meanwhile by another program (the port is
        chosen before the server binds it) means another free port, a few times."""
        chosen = self.port
        for attempt in range(5):
            self.port = chosen or free_port()
            self._configure(certificate=attempt == 0)
            if self.log.exists():
                self.log.write_text("", encoding="utf-8")
            try:
                self.start()
                return
            except EngineError:
                said = self.log.read_text(encoding="utf-8", errors="replace")
                if chosen or "already in use" not in said:
                    raise
        raise EngineError("no free port could be bound for the server")

    def _configure(self, *, certificate: bool = True) -> None:
        lines = [
            "# teamdeck",
            f"listen_addresses = '{self._addresses()}'",
            f"port = {self.port}",
            f"unix_socket_directories = '{self.sockets}'",
            "password_encryption = 'scram-sha-256'",
            "shared_buffers = 32MB",
            "max_connections = 200",
        ]
        hba = [
            "local all all scram-sha-256",
            "host all all 127.0.0.1/32 scram-sha-256",
            "host all all ::1/128 scram-sha-256",
        ]
        if self.listen not in ("127.0.0.1", "localhost"):
            if certificate:
                self._certificate()
            lines += ["ssl = on", "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'"]
            hba += ["hostssl all all 0.0.0.0/0 scram-sha-256", "hostssl all all ::/0 scram-sha-256"]
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\n".join(lines) + "\n")
        (self.data / "pg_hba.conf").write_text("\n".join(hba) + "\n", encoding="utf-8")

    def _addresses(self) -> str:
        """Loopback always (the administrator's URL), and the address asked for."""
        if self.listen in ("127.0.0.1", "localhost"):
            return "127.0.0.1"
        return f"127.0.0.1,{self.listen}"

    def _certificate(self, addresses: list[str] | None = None) -> None:
        """The server's certificate, naming the addresses it listens on and the host name
        (``app.engine.certificates``: the joiner pins its authority's)."""
        key, crt = make_certificate(self.data, addresses or self._addresses().split(","))
        self._give(key)
        self._give(crt)

    def _name_addresses(self) -> None:
        """Before a start: a certificate that does not name every address the server listens
        on (an earlier teamdeck's, or one from before ``--listen`` changed) is made again by
        the server's authority, so the joiners' pins still check it."""
        crt = self.data / "server.crt"
        conf = (self.data / "postgresql.conf").read_text(encoding="utf-8")
        if not crt.is_file() or "\nssl = on" not in conf:
            return
        listening = self.listen_addresses()
        if not all(names(crt, address) for address in listening if address not in WILDCARDS):
            self._certificate(listening)

    # ------------------------------------------------------------------ run

    def admin_url(self) -> str:
        try:
            return self.admin_file.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            raise EngineError(
                f"no server is set up in {self.folder}: run `teamdeck server init`"
            ) from None

    def pid(self) -> int | None:
        """The postmaster's PID if it runs."""
        try:
            first = (self.data / "postmaster.pid").read_text(encoding="utf-8").split("\n", 1)[0]
            pid = int(first)
        except (FileNotFoundError, ValueError):
            return None
        return pid if alive(pid) else None

    def start(self, timeout: float = 60) -> int:
        """Start the server (no-op if it runs); its PID once it accepts connections."""
        running = self.pid()
        if running is not None:
            return running
        if not (self.data / "PG_VERSION").exists():
            raise EngineError(f"no server is set up in {self.folder}: run `teamdeck server init`")
        self.log.touch()
        self._give(self.log)
        self._drop_dead_lock()
        self._name_addresses()
        if self.child:
            return self._start_child(timeout)
        argv = [
            self._bin("pg_ctl"),
            "start",
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            str(int(timeout)),
            "-s",
        ]
        done = subprocess.run(
            self._command(argv), capture_output=True, text=True, cwd=self.folder, check=False
        )
        pid = self.pid()
        if done.returncode != 0 or pid is None:
            tail = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            raise EngineError(f"the server did not start: {tail[-1] if tail else done.stderr}")
        return pid

    def _drop_dead_lock(self) -> None:
        """A postmaster killed with ``kill -9`` leaves its lock file, and where nothing reaps
        the orphan (a container whose first process is no init) its pid lives on as a zombie,
        which PostgreSQL takes for a running postmaster and refuses to start beside. The
        process is dead (``pid()`` said so): its locks (the data folder's and the socket's)
        go."""
        for lock in [self.data / "postmaster.pid", *self.sockets.glob(".s.PGSQL.*.lock")]:
            try:
                stale = int(lock.read_text(encoding="utf-8").split("\n", 1)[0])
            except (FileNotFoundError, ValueError):
                continue
            if not alive(stale) and Path(f"/proc/{stale}").exists():
                lock.unlink(missing_ok=True)

    def _start_child(self, timeout: float) -> int:
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(
                self._command([self._bin("postgres"), "-D", str(self.data)]),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.folder,
                start_new_session=True,
            )
        give_up = time.monotonic() + timeout
        ready = [
            self._bin("pg_isready"),
            "-q",
            "-h",
            str(self.sockets),
            "-p",
            str(self._conf_port()),
        ]
        while time.monotonic() < give_up:
            if self._proc.poll() is not None:
                tail = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
                raise EngineError(f"the server did not start: {tail[-1] if tail else '?'}")
            if subprocess.run(ready, check=False).returncode == 0:
                pid = self.pid()
                if pid is not None:
                    return pid
            time.sleep(0.05)
        raise EngineError(f"the server did not start within {timeout:.0f} s (see {self.log})")

    def _conf_port(self) -> int:
        port = self.port
        for line in (self.data / "postgresql.conf").read_text(encoding="utf-8").splitlines():
            if line.startswith("port = "):
                port = int(line.split("=", 1)[1])  # the last one is in force
        return port

    def _reap(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=30)
            self._proc = None

    def stop(self, timeout: float = 30) -> bool:
        """Stop by PID (a fast shutdown, then SIGKILL of its process group); whether it ran."""
        pid = self.pid()
        if pid is None:
            return False
        os.kill(pid, signal.SIGINT)
        give_up = time.monotonic() + timeout
        if self._proc is not None and self._proc.pid == pid:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=timeout)
        while time.monotonic() < give_up and self.pid() == pid:
            time.sleep(0.05)
        if self.pid() == pid:
            self.kill()
        self._reap()
        return True

    def kill(self) -> None:
        """``kill -9`` of the server and every backend (its process group: pg_ctl starts
        it in a session of its own): a crash."""
        pid = self.pid()
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        self._reap()
        give_up = time.monotonic() + 30
        while alive(pid) and time.monotonic() < give_up:
            time.sleep(0.02)

    def status(self) -> str:
        pid = self.pid()
        if not (self.data / "PG_VERSION").exists():
            return f"no server set up in {self.folder}"
        if pid is None:
            return f"stopped ({self.folder})"
        port = self._port()
        return f"running, pid {pid}, {self.listen_address()}:{port} ({self.folder})"

    def _port(self) -> int:
        lines = (self.data / "postmaster.pid").read_text(encoding="utf-8").splitlines()
        return int(lines[3]) if len(lines) > 3 else self.port

    def listen_address(self) -> str:
        """The address the server listens on for other machines (127.0.0.1: none)."""
        return self.listen_addresses()[-1]

    def listen_addresses(self) -> list[str]:
        addresses = ["127.0.0.1"]
        for line in (self.data / "postgresql.conf").read_text(encoding="utf-8").splitlines():
            if line.startswith("listen_addresses"):  # the last one is in force
                value = line.split("=", 1)[1].strip().strip("'")
                addresses = [a.strip() for a in value.split(",") if a.strip()]
        return addresses
