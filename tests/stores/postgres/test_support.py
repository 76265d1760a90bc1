"""The test cluster's binaries: found on the PATH or in Debian's directory, a clear error else."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import postgres_support
from tests.postgres_support import free_port

ROOT = Path(__file__).resolve().parents[3]

# Makes a cluster, says where it is and its postmaster's pid, then waits to be killed.
MAKE_AND_WAIT = """
import sys
from tests.postgres_support import started_cluster
cluster = started_cluster()
print(cluster.root, cluster.server_pids()[0], flush=True)
sys.stdin.read()
"""


def test_missing_postgresql_is_an_error_not_a_skip(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without initdb anywhere, find_bindir raises (so every server test fails) and says why."""
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    monkeypatch.setattr(postgres_support, "DEBIAN_ROOT", tmp_path)
    with pytest.raises(
        RuntimeError, match=r"PostgreSQL is not installed .* make test, which installs it"
    ):
        postgres_support.find_bindir()


def test_debian_directory_is_searched_newest_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without initdb on the PATH, the newest /usr/lib/postgresql/N/bin holding it is used."""
    for version in ("13", "15"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / "initdb").touch()
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    monkeypatch.setattr(postgres_support, "DEBIAN_ROOT", tmp_path)
    assert postgres_support.find_bindir() == tmp_path / "15" / "bin"


@pytest.mark.slow
def test_a_killed_runs_cluster_is_stopped_and_deleted_by_the_next_run() -> None:
    """A test process killed with SIGKILL leaves its server running; the next cluster made stops
    it and deletes its directory, and leaves the clusters of live processes alone."""
    with subprocess.Popen(
        [sys.executable, "-c", MAKE_AND_WAIT],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as maker:
        assert maker.stdout is not None
        root_text, pid_text = maker.stdout.readline().split()
        root, postmaster = Path(root_text), int(pid_text)
        maker.kill()
    assert root.is_dir()
    assert postgres_support._identity(postmaster) is not None  # orphaned, still serving

    mine = postgres_support.Cluster()  # sweeps while it is made
    try:
        assert not root.exists()
        assert postgres_support._identity(postmaster) is None
        # Its own cluster is not a leftover (another run's killed clusters may be, meanwhile).
        assert mine.root not in postgres_support.sweep_leftovers()
        assert mine.root.is_dir()
    finally:
        mine.destroy()


def test_a_directory_whose_pid_file_names_another_process_is_deleted_without_a_signal(
    tmp_path: Path,
) -> None:
    """A leftover whose postmaster.pid names a process that is not its server (the pid reused
    after a reboot) is deleted, and that process gets no signal."""
    leftover = tmp_path / (postgres_support.PREFIX + "old")
    (leftover / "data").mkdir(parents=True)
    (leftover / postgres_support.OWNER).write_text("999999999 1", encoding="utf-8")
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as bystander:
        try:
            pid_file = leftover / "data" / "postmaster.pid"
            pid_file.write_text(f"{bystander.pid}\n", encoding="utf-8")
            assert postgres_support.sweep_leftovers(tmp_path) == [leftover]
            assert not leftover.exists()
            assert bystander.poll() is None
        finally:
            bystander.kill()


@pytest.mark.parametrize("owner", [None, "", "12", "x 1", "12 3 4"])
def test_a_directory_without_a_whole_owner_is_left_alone(tmp_path: Path, owner: str | None) -> None:
    """A directory whose owner file is missing (being made right now) or not one this module
    writes is not touched."""
    fresh = tmp_path / (postgres_support.PREFIX + "new")
    fresh.mkdir()
    if owner is not None:
        (fresh / postgres_support.OWNER).write_text(owner, encoding="utf-8")
    assert postgres_support.sweep_leftovers(tmp_path) == []
    assert fresh.is_dir()


def test_the_cluster_of_another_live_process_is_left_alone(tmp_path: Path) -> None:
    """A directory naming a process that still runs (with its start time) is not touched."""
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as other:
        try:
            identity = postgres_support._identity(other.pid)
            assert identity is not None
            theirs = tmp_path / (postgres_support.PREFIX + "theirs")
            theirs.mkdir()
            (theirs / postgres_support.OWNER).write_text(identity, encoding="utf-8")
            assert postgres_support.sweep_leftovers(tmp_path) == []
            assert theirs.is_dir()
            # The same pid with another start time is a reused pid: that run is gone.
            pid, started = identity.split()
            (theirs / postgres_support.OWNER).write_text(f"{pid} {int(started) + 1}", "utf-8")
            assert postgres_support.sweep_leftovers(tmp_path) == [theirs]
            assert other.poll() is None
        finally:
            other.kill()


def test_a_cluster_port_is_free_and_outside_the_ephemeral_range() -> None:
    """Cluster ports never come from the range outgoing connections take their ports from,
    and each is free when chosen."""
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    for _ in range(20):
        port = free_port()
        assert 1_024 <= port < 65_536
        assert not low <= port <= high
