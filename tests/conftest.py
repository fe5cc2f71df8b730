"""Shared fixtures: a store factory over every backend, and a small seeded corpus.

Store tests use only the public API and ``snapshot()``, so a backend registered in
``kbsim.store.STORE_BACKENDS`` is one more entry in ``BACKENDS``, with no edit here.
"""

from __future__ import annotations

import itertools
import signal
from typing import Any

import numpy as np
import pytest

import kbsim
from kbsim.store import STORE_BACKENDS


def _registered(factory):
    """A registered backend's factory as a BACKENDS entry (the only option is the retention)."""
    return lambda path_stem, event_retention_s=None: factory(event_retention_s)


#: backend name -> build(path_stem, **options) -> a fresh, empty store: every backend an
#: experiment can name (kbsim.store.STORE_BACKENDS), so a registered backend is held to
#: the conformance tests with no edit here
BACKENDS = {name: _registered(factory) for name, factory in STORE_BACKENDS.items()}
# SQLite on a file in WAL mode, as users run it; NORMAL skips the per-save fsync (same semantics)
BACKENDS["sqlite"] = lambda path_stem, **o: kbsim.SQLiteStore(f"{path_stem}.db", synchronous="NORMAL", **o)


def pytest_configure(config):
    """Register the ``slow`` marker (tests over ~20 s; deselect them with ``-m "not slow"``)."""
    config.addinivalue_line("markers", "slow: a test that takes more than about 20 seconds")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Refuse a ``--dist loadgroup`` run in which pytest-xdist could not group the tests.

    xdist groups a test by a suffix it writes into the test's node id on the worker; with
    pytest 9.2's structured node ids the write is lost and every group is silently spread over
    the workers (pytest-dev/pytest-xdist#1386), so each worker builds the shared fixtures of
    a group again (the figures' tiny study, the import-first interpreter: minutes of CPU).
    """
    if not getattr(config.option, "loadgroup", False):
        return
    lost = [item.nodeid for item in items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
    if lost:
        raise pytest.UsageError(
            f"pytest {pytest.__version__} with pytest-xdist drops --dist loadgroup's groups ({lost[0]} has "
            "no @group suffix; pytest-dev/pytest-xdist#1386): install pytest<9.2 (`make install` does)")


def _ctrl_c_held() -> set[str]:
    """Whether this process (its main thread) ignores or blocks SIGINT, as the kernel sees it:
    what a process it starts inherits (an ignored signal stays ignored across exec, and a
    blocked one blocked), whatever Python's own handler says."""
    held: set[str] = set()
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                name, _, mask = line.partition(":")
                if name in ("SigIgn", "SigBlk") and int(mask, 16) >> (signal.SIGINT - 1) & 1:
                    held.add("ignored" if name == "SigIgn" else "blocked")
    except (OSError, ValueError):  # no /proc: nothing to check
        pass
    handler = signal.getsignal(signal.SIGINT)
    if handler not in (signal.default_int_handler, signal.SIG_IGN, signal.SIG_DFL):
        held.add(f"handled by {handler!r}")  # a leftover handler: kbsim's CLI then leaves Ctrl-C to it
    return held


#: What SIGINT was when the last test ended, and that test's id: a change between two tests
#: (a module's or session's fixture) is caught at the next test's start.
_LAST_CTRL_C: dict[str, Any] = {"held": None, "test": None}


@pytest.fixture(autouse=True)
def _ctrl_c_still_reaches_new_processes(request):
    """A test, or a fixture set up or torn down between tests, must not leave its worker ignoring
    or blocking SIGINT: every process the tests after it start would inherit that, and a Ctrl-C
    test of a fresh ``kbsim`` would wait out its day."""
    before = _ctrl_c_held()
    last, previous = _LAST_CTRL_C["held"], _LAST_CTRL_C["test"]
    _LAST_CTRL_C["test"] = request.node.nodeid
    if last is not None and before - last:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _LAST_CTRL_C["held"] = _ctrl_c_held()
        pytest.fail(f"SIGINT became {' and '.join(sorted(before - last))} between {previous} and this test's "
                    "start (a fixture's setup or teardown)")
    yield
    after = _ctrl_c_held()
    _LAST_CTRL_C["held"] = after
    left = after - before
    if left:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _LAST_CTRL_C["held"] = _ctrl_c_held()
        pytest.fail(f"the test left its process with SIGINT {' and '.join(sorted(left))} (now restored)")


@pytest.fixture(params=sorted(BACKENDS))
def store(request, tmp_path):
    """A factory: ``store(**options)`` builds a fresh, empty store of one backend."""
    build = BACKENDS[request.param]
    counter = itertools.count(1)

    def make(**options):
        return build(tmp_path / f"store-{next(counter)}", **options)

    return make


_SYLLABLES = ("ka", "lo", "mi", "nu", "pe", "ra", "si", "tu", "ve", "zo")


def seed_corpus(store, kb_id: str = "kb-1", n_articles: int = 30, seed: int = 7) -> list[str]:
    """Create ``kb_id`` and publish ``n_articles`` at t=0; returns their ids.

    Titles are 4 distinct words, bodies 30 words, from a vocabulary of
    4 words per article, so that a title query finds its article first and
    usually others too.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    vocabulary = [
        "".join(parts) for parts in itertools.product(_SYLLABLES, repeat=3)
    ][: 4 * n_articles]
    store.create_knowledge_base(kb_id)
    titles: set[str] = set()
    ids = []
    while len(ids) < n_articles:
        title = " ".join(rng.choice(vocabulary, size=4, replace=False))
        body = " ".join(rng.choice(vocabulary, size=30))
        if title in titles:
            continue
        titles.add(title)
        ids.append(store.publish_article(kb_id, title=title, content=body, at=0.0))
    return ids


@pytest.fixture
def corpus():
    """The :func:`seed_corpus` helper (a fixture, so tests need not import conftest)."""
    return seed_corpus
