"""Throwaway PostgreSQL clusters for the tests: initdb, start, stop, kill, fresh databases.

``Cluster`` runs the server binaries as the ``postgres`` OS user when the tests run as root
(``initdb`` and ``pg_ctl`` refuse root), on a private socket directory and a loopback port. Each
cluster carries a template database with pg_trgm, so ``fresh_database`` (``CREATE DATABASE ...
TEMPLATE``) is cheap. A machine without the PostgreSQL binaries makes ``find_bindir`` raise:
the tests that need a server fail, they are not skipped.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

TEMPLATE = "lionmem_template"
PREFIX = "lionmem-pg-"
"""The name every cluster directory starts with, in the temporary directory."""
OWNER = "owner"
"""The file in a cluster directory naming the process that made it (pid and start time)."""
DEBIAN_ROOT = Path("/usr/lib/postgresql")
"""Where Debian's postgresql packages put each version's binaries (``15/bin``, ...)."""
_FAST = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
_names = itertools.count()
_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def find_bindir() -> Path:
    """The directory holding initdb and pg_ctl: on the PATH, else Debian's versioned directory."""
    found = shutil.which("initdb")
    if found is not None:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(DEBIAN_ROOT.glob("*/bin/initdb"), reverse=True)
    if candidates:
        return candidates[0].parent
    msg = (
        "PostgreSQL is not installed (no initdb on the PATH or in /usr/lib/postgresql/*/bin): "
        "apt-get install postgresql, or run make test, which installs it"
    )
    raise RuntimeError(msg)


def free_port() -> int:
    """A loopback port free now, outside the kernel's ephemeral range: the source port of an
    outgoing connection (another test's client) never takes it between the choice and the
    server's start, nor while the server is stopped for a restart."""
    try:
        low, high = map(int, _EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        low, high = 32_768, 60_999  # Linux's default
    candidates: list[int] = [*range(max(low - 12_000, 1_024), low), *range(high + 1, 65_536)]
    for port in random.sample(candidates, min(100, len(candidates))):
        try:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", port))
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
        else:
            return port
    msg = f"no free loopback port outside the ephemeral range {low}-{high}"
    raise RuntimeError(msg)


class Cluster:
    """One PostgreSQL cluster in a temporary directory, started and stopped on request.

    ``durable`` keeps fsync and synchronous commits on (for crash tests); otherwise the cluster
    trades durability for speed. ``settings`` are further ``-c`` server settings.
    """

    def __init__(self, *, durable: bool = False, settings: dict[str, str] | None = None) -> None:
        self.bindir = find_bindir()
        sweep_leftovers()
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX))
        # Written whole, then renamed into place: a sweep never reads a half-written owner.
        (self.root / "owner.new").write_text(_identity(os.getpid()) or "", encoding="utf-8")
        (self.root / "owner.new").replace(self.root / OWNER)
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.settings = {**({} if durable else _FAST), **(settings or {})}
        self.sockets.mkdir()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(self.sockets, "postgres", "postgres")
        self._run(
            "initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
            "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, text=True)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = [
            f"-c port={self.port}",
            "-c listen_addresses=127.0.0.1",
            f"-c unix_socket_directories={self.sockets}",
            "-c max_connections=200",
            *(f"-c {key}={value}" for key, value in self.settings.items()),
        ]
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "30",
            "-o", " ".join(options), "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: disconnect every session, then shut down cleanly)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def server_pids(self) -> list[int]:
        """The postmaster's process id followed by its children's."""
        pid_file = self.data / "postmaster.pid"
        if not pid_file.exists():
            return []
        postmaster = int(pid_file.read_text().split()[0])
        children: list[int] = []
        for task in Path(f"/proc/{postmaster}/task").glob("*/children"):
            children.extend(int(pid) for pid in task.read_text().split())
        return [postmaster, *children]

    def kill(self) -> None:
        """SIGKILL the postmaster and its children (a crash), and wait until they are gone."""
        pids = self.server_pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in pids):
            if time.monotonic() > deadline:
                msg = f"server processes {pids} survived SIGKILL"
                raise RuntimeError(msg)
            time.sleep(0.01)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` through psql as the superuser and return its unaligned output."""
        result = subprocess.run(
            [
                str(self.bindir / "psql") if (self.bindir / "psql").exists() else "psql",
                "-h",
                str(self.sockets),
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                database,
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        return result.stdout.strip()

    def dsn(self, database: str = "postgres") -> str:
        """A DSN for ``database`` over the loopback port."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def make_template(self) -> None:
        """Create the template database fresh databases are copied from (with pg_trgm)."""
        self.psql(f"CREATE DATABASE {TEMPLATE}")
        self.psql("CREATE EXTENSION pg_trgm", TEMPLATE)

    def fresh_database(self, prefix: str = "t", *, template: str = TEMPLATE) -> str:
        """Create a new empty database from ``template`` (pg_trgm installed) and return its name."""
        name = f"{prefix}_{os.getpid()}_{next(_names)}"
        self.psql(f"CREATE DATABASE {name} TEMPLATE {template}")
        return name

    def destroy(self) -> None:
        """Stop the server if it runs (immediately) and delete the cluster's directory."""
        if self.server_pids():
            with contextlib.suppress(subprocess.CalledProcessError):
                self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def _identity(pid: int) -> str | None:
    """``pid`` and its start time (so a reused pid is not mistaken for it), or ``None`` if it
    has exited (a zombie included)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return None if fields[0] == "Z" else f"{pid} {fields[19]}"


def _postmaster_of(data: Path) -> int | None:
    """The running postmaster serving ``data``, or ``None`` (a pid file's pid may be reused)."""
    try:
        pid = int((data / "postmaster.pid").read_text().split()[0])
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError, IndexError):
        return None
    return pid if os.fsencode(data) in command else None


def sweep_leftovers(directory: Path | None = None) -> list[Path]:
    """Stop the servers of clusters whose making process is gone (a killed test run) and delete
    their directories; return the directories removed. Other processes' clusters are left alone."""
    removed = []
    for root in sorted((directory or Path(tempfile.gettempdir())).glob(PREFIX + "*")):
        try:
            owner = (root / OWNER).read_text(encoding="utf-8").split()
        except OSError:
            continue  # being made right now, or not ours
        if len(owner) != 2 or not owner[0].isdigit():
            continue  # not an owner this module wrote
        if _identity(int(owner[0])) == " ".join(owner):
            continue  # its process still runs
        postmaster = _postmaster_of(root / "data")
        if postmaster is not None:
            # SIGQUIT: the postmaster's immediate shutdown; it takes its children with it.
            with contextlib.suppress(ProcessLookupError):
                os.kill(postmaster, signal.SIGQUIT)
            deadline = time.monotonic() + 10
            while _identity(postmaster) is not None and time.monotonic() < deadline:
                time.sleep(0.01)
        shutil.rmtree(root, ignore_errors=True)
        removed.append(root)
    return removed


def started_cluster(*, durable: bool = False, settings: dict[str, str] | None = None) -> Cluster:
    """A new cluster, started, with its template database."""
    cluster = Cluster(durable=durable, settings=settings)
    try:
        cluster.start()
        cluster.make_template()
    except BaseException:
        cluster.destroy()
        raise
    return cluster
