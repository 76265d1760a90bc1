"""The conformance harness of PostgresMemoryStore (ADR-0093 D2) over one database of a cluster.

Each ``reset`` closes the stores made so far, undoes every fault and moves to a new namespace,
so every case (and every example of the reference-search profile) starts empty without a new
database. The index is immediate, so ``make_search_index_visible`` does nothing. The faults are
real server conditions:

* transport outage: the database stops accepting connections and every session on it is
  terminated (``ALLOW_CONNECTIONS false``, ``pg_terminate_backend``);
* refused writes: a trigger that raises on every insert and update of ``lionmem_items``;
* malformed answers: the ``metadata`` column is swapped for an integer column, so every row
  comes back without its metadata and every write is refused by its type;
* foreign records: a row in another table of the same database, whose id is not a memory's.
"""

from __future__ import annotations

from uuid import UUID, uuid4

from lionmem.stores.postgres import PostgresMemoryStore
from tests.postgres_support import Cluster, started_cluster

CONNECT_TIMEOUT = 10.0
"""Long enough for a machine busy with tests on every core (a refused connection fails at once
whatever it is): 2 s was once too short there for a fresh database's first store."""


class PostgresHarness:
    """Makes PostgresMemoryStores over ``database`` of ``cluster`` and breaks them on request."""

    def __init__(self, cluster: Cluster, database: str, *, owned: bool = False) -> None:
        self.cluster = cluster
        self.database = database
        self.owned = owned  # close() then destroys the cluster too
        self.generation = 0
        self.stores: list[PostgresMemoryStore] = []
        self.faults: set[str] = set()

    @property
    def namespace(self) -> str:
        """The namespace of the current case."""
        return f"conformance-{self.generation}"

    def _store(self) -> PostgresMemoryStore:
        return PostgresMemoryStore(
            self.cluster.dsn(self.database),
            namespace=self.namespace,
            connect_timeout=CONNECT_TIMEOUT,
        )

    async def make_store(self) -> PostgresMemoryStore:
        """Return a store over the current namespace."""
        store = self._store()
        self.stores.append(store)
        return store

    async def reset(self) -> None:
        """Close every store, undo every fault and move to a new, empty namespace."""
        await self._close_stores()
        if "outage" in self.faults:
            self.cluster.psql(f"ALTER DATABASE {self.database} ALLOW_CONNECTIONS true")
        if "rejected" in self.faults:
            self._sql(
                "DROP TRIGGER refuse_writes ON lionmem_items",
                "DROP FUNCTION refuse_writes()",
            )
        if "malformed" in self.faults:
            self._sql(
                "ALTER TABLE lionmem_items DROP COLUMN metadata",
                "ALTER TABLE lionmem_items RENAME COLUMN kept_metadata TO metadata",
            )
        self.faults.clear()
        self.generation += 1

    async def make_search_index_visible(self) -> None:
        """Nothing to do: a committed write is searchable at once."""

    async def make_transport_unavailable(self) -> None:
        """Refuse new connections to the database and end every session on it."""
        self.faults.add("outage")
        self.cluster.psql(f"ALTER DATABASE {self.database} ALLOW_CONNECTIONS false")
        self.cluster.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            f"WHERE datname = '{self.database}'"
        )

    async def make_writes_rejected(self) -> None:
        """Make the database refuse every insert and update of an item until the next reset."""
        await self._create_tables()
        self.faults.add("rejected")
        self._sql(
            "CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'writes refused by the conformance harness'; END $$",
            "CREATE TRIGGER refuse_writes BEFORE INSERT OR UPDATE ON lionmem_items "
            "FOR EACH ROW EXECUTE FUNCTION refuse_writes()",
        )

    async def make_responses_malformed(self) -> None:
        """Swap the metadata column for an integer one: rows come back malformed."""
        await self._create_tables()
        self.faults.add("malformed")
        self._sql(
            "ALTER TABLE lionmem_items RENAME COLUMN metadata TO kept_metadata",
            "ALTER TABLE lionmem_items ALTER COLUMN kept_metadata DROP NOT NULL",
            "ALTER TABLE lionmem_items ADD COLUMN metadata integer",
        )

    async def make_foreign_record(self) -> UUID:
        """Put a non-memory row with a fresh UUID into another table of the database."""
        await self._create_tables()
        identity = uuid4()
        self._sql(
            "CREATE TABLE IF NOT EXISTS foreign_notes (id uuid PRIMARY KEY, body text)",
            f"INSERT INTO foreign_notes VALUES ('{identity}', 'not a memory')",
        )
        return identity

    async def close(self) -> None:
        """Close every store made so far, and destroy the cluster if it is owned (idempotent)."""
        await self._close_stores()
        if self.owned:
            self.cluster.destroy()

    async def _close_stores(self) -> None:
        stores, self.stores = self.stores, []
        for store in stores:
            await store.close()

    async def _create_tables(self) -> None:
        store = self._store()
        await store.open()
        await store.close()

    def _sql(self, *statements: str) -> None:
        self.cluster.psql("; ".join(statements), self.database)


def harness() -> PostgresHarness:
    """A harness over a new throwaway cluster, for ``python -m lionmem conformance``.

    From the repository root: ``python -m lionmem conformance tests.stores.postgres.harness:harness``.
    """
    cluster = started_cluster()
    return PostgresHarness(cluster, cluster.fresh_database("conformance"), owned=True)
