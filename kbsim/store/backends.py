"""The store backends a simulated day can be named to run on (``store.backend``).

A backend is registered here by name, as the :data:`~kbsim.store.protocol.StoreFactory`
that builds an empty store from the day's event-retention window. Adding a backend is
its module, one line in :data:`STORE_BACKENDS`, and a test that holds it to the others
(``tests/test_store_conformance.py`` and a day compared table by table).
"""

from __future__ import annotations

from kbsim.store.memory import MemoryStore
from kbsim.store.protocol import StoreFactory
from kbsim.store.sqlite import SQLiteStore


def sqlite_in_memory(event_retention_s: float | None) -> SQLiteStore:
    """A :class:`SQLiteStore` in a private in-memory database: SQLite's schema, search
    and transactions, with no file to clean up after the day."""
    return SQLiteStore(":memory:", event_retention_s=event_retention_s)


#: Backend name -> the factory of an empty store. ``store.backend`` in a day's
#: parameters names one; ``memory`` is the default.
STORE_BACKENDS: dict[str, StoreFactory] = {
    "memory": MemoryStore,
    "sqlite": sqlite_in_memory,
}


def store_backend(name: str) -> StoreFactory:
    """The factory registered as ``name``.

    Raises:
        ValueError: no backend is registered as ``name`` (the message lists those that are).
    """
    try:
        return STORE_BACKENDS[name]
    except KeyError:
        raise ValueError(
            f"{name!r} is not a store backend (kbsim.store.STORE_BACKENDS); expected one of "
            f"{', '.join(sorted(STORE_BACKENDS))}"
        ) from None
