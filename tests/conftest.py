"""Shared test configuration: hypothesis profiles sized for CI on a shared two-core machine, and
the fixtures several test modules use."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.postgres_support import Cluster, started_cluster

# No deadline: the machines are shared and noisy; speed is measured by the benchmark tools.
settings.register_profile(
    "lionmem",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("lionmem")


@pytest.fixture
def local_tz(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """Yield a setter of the process's local time zone, restoring the original one afterwards."""

    def set_tz(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_tz
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="module", params=["c", "python"])
def text_scan(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a module's tests with InMemoryStore's C text scan, then with its Python stand-in.

    The C module must be built (``make install`` requires it): importing it fails loudly here
    otherwise, instead of the tests silently running the Python walk twice.
    """
    from lionmem import _speedups
    from lionmem.stores import memory

    with pytest.MonkeyPatch.context() as patch:
        chosen = _speedups.scan if request.param == "c" else memory._walk_cached
        patch.setattr(memory, "_scan_cached", chosen)
        yield request.param


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Cluster]:
    """A throwaway PostgreSQL cluster for the whole session; fails (never skips) without one."""
    cluster = started_cluster()
    yield cluster
    cluster.destroy()


@pytest.fixture
def postgres_dsn(postgres_server: Cluster) -> str:
    """The DSN of a new, empty database (with pg_trgm) on the session's cluster."""
    return postgres_server.dsn(postgres_server.fresh_database())
