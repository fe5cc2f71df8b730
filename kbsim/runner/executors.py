"""Where runs are computed: a local process pool or a Dask cluster, behind one loop.

Both executors do the same thing: split the jobs into batches, ship each batch to a
worker as :func:`kbsim.runner.worker.run_batch`, and hand the outcomes of each batch
to the caller as it completes (a batch whose worker died becomes one error outcome per
job). :func:`execute` is that loop, once; a :class:`Pool` is what differs (how tasks are
submitted, waited for, released and cancelled), opened by :func:`local_pool` or
:func:`dask_pool`. Nothing here writes a file: the caller's ``handle`` does, in this
process, while :class:`Signals` holds SIGINT and SIGTERM back until a run's files are
written.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from kbsim.errors import UsageError
from kbsim.extras import require
from kbsim.runner.worker import error_outcome, run_batch

__all__ = [
    "EXECUTORS",
    "Interrupted",
    "Pool",
    "SchedulerUnavailable",
    "check_scheduler_address",
    "Signals",
    "dask_pool",
    "execute",
    "execute_dask",
    "execute_local",
    "in_process_pool",
    "local_pool",
]

#: The executors :func:`kbsim.runner.run.run_experiment` can use.
EXECUTORS = ("local", "dask")
#: At most this many runs a batch: an interrupt loses at most the batches in flight, so they are kept
#: small (a reference day takes about 0.1 s of CPU; a batch of 4, well under a minute on a busy machine).
_MAX_BATCH = 4
#: Imported once in the fork server rather than in every worker: what a worker runs.
_PRELOAD = ["__main__", "kbsim.runner.worker", "kbsim.sim", "kbsim.stats.metrics"]


class SchedulerUnavailable(UsageError, ConnectionError):
    """The Dask scheduler given by address cannot be reached."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; every completed run is safely on disk."""

    def __init__(self, signum: int | str) -> None:
        # by number, or by the name its args hold (an exception re-made from its args, as a
        # copy or an exception group's derive does, must not turn into a ValueError)
        sig = signal.Signals[signum] if isinstance(signum, str) else signal.Signals(signum)
        super().__init__(sig.name)
        self.signum = int(sig)


# --------------------------------------------------------------------- the loop


class Pool(Protocol):
    """What :func:`execute` needs of an executor's workers."""

    #: How many workers compute at once (batches are sized for them).
    workers: int

    def submit(self, batch: list[dict], run_day: Callable | str, index: int) -> Any:
        """Start ``run_batch(batch, run_day)`` on a worker; a future of its outcomes."""

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        """The futures, each as it completes."""

    def release(self, future: Any) -> None:
        """Forget a completed future's result (the caller holds what it needs)."""

    def cancel(self, futures: list[Any]) -> None:
        """Stop the futures not yet completed (none, when the caller's ``handle`` raised after the
        last) and the workers computing them."""


def _batches(jobs: list[dict], workers: int, batch_size: int | None) -> list[list[dict]]:
    if batch_size is None:
        batch_size = max(1, min(_MAX_BATCH, math.ceil(len(jobs) / (4 * workers))))
    return [jobs[i : i + batch_size] for i in range(0, len(jobs), batch_size)]


def execute(
    pool: contextlib.AbstractContextManager[Pool],
    jobs: list[dict],
    batch_size: int | None,
    run_day: Callable | str,
    handle: Callable[[list[dict]], None],
) -> tuple[int, int]:
    """Compute ``jobs`` in batches on ``pool``, calling ``handle`` with each batch's outcomes.

    Returns:
        ``(workers, runs per batch)`` as used (``runs per batch`` is 0 when there were no jobs).
    """
    with pool as opened:
        batches = _batches(jobs, opened.workers, batch_size)
        futures: dict[Any, list[dict]] = {}
        try:
            for i, batch in enumerate(batches):
                futures[opened.submit(batch, run_day, i)] = batch
            for future in opened.as_completed(list(futures)):
                batch = futures.pop(future)
                try:
                    outcomes = future.result()
                except Exception as exc:  # a worker died (or was lost), or could not unpickle
                    outcomes = [error_outcome(job, exc, traceback.format_exc()) for job in batch]
                opened.release(future)
                handle(outcomes)
        except BaseException:
            opened.cancel(list(futures))
            raise
    return opened.workers, len(batches[0]) if batches else 0


# ------------------------------------------------------------- in this process


class _InProcessPool:
    """One worker: this process. A batch is computed when its future is asked for, so each
    batch's outcomes are handled (written) before the next starts."""

    def __init__(self) -> None:
        self.workers = 1
        self._pending: dict[concurrent.futures.Future, tuple[list[dict], Callable | str]] = {}

    def submit(self, batch: list[dict], run_day: Callable | str, index: int) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._pending[future] = (batch, run_day)
        return future

    def as_completed(self, futures: Iterable[concurrent.futures.Future]) -> Iterator[concurrent.futures.Future]:
        for future in futures:
            batch, run_day = self._pending.pop(future)
            future.set_result(run_batch(batch, run_day))  # a KeyboardInterrupt stops the loop here
            yield future

    def release(self, future: concurrent.futures.Future) -> None:
        pass

    def cancel(self, futures: list[concurrent.futures.Future]) -> None:
        self._pending.clear()


@contextlib.contextmanager
def in_process_pool() -> Iterator[Pool]:
    """Runs computed in this process, one batch after another: no process is started, so a
    script without an ``if __name__ == "__main__":`` guard, or read from stdin, runs as is."""
    yield _InProcessPool()


# ----------------------------------------------------------- a local process pool


class _LocalPool:
    def __init__(self, executor: concurrent.futures.ProcessPoolExecutor, workers: int, before: set) -> None:
        self._executor, self.workers = executor, workers
        self._before = before  # the processes that were there before the pool's

    def submit(self, batch: list[dict], run_day: Callable | str, index: int) -> concurrent.futures.Future:
        return self._executor.submit(run_batch, batch, run_day)

    def as_completed(self, futures: Iterable[concurrent.futures.Future]) -> Iterator[concurrent.futures.Future]:
        return concurrent.futures.as_completed(futures)

    def release(self, future: concurrent.futures.Future) -> None:
        pass  # the pool keeps nothing of a completed future

    def cancel(self, futures: list[concurrent.futures.Future]) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        for process in set(multiprocessing.active_children()) - self._before:
            process.terminate()


@contextlib.contextmanager
def local_pool(workers: int) -> Iterator[Pool]:
    """A process pool with an explicit start-method context (nothing global is set)."""
    context: multiprocessing.context.BaseContext
    if "forkserver" in multiprocessing.get_all_start_methods():
        forkserver = multiprocessing.get_context("forkserver")
        # Import the simulation once in the fork server, not once per worker. This only
        # affects a fork server started from now on; the start method stays untouched.
        forkserver.set_forkserver_preload(_PRELOAD)
        context = forkserver
    else:
        context = multiprocessing.get_context("spawn")
    before = set(multiprocessing.active_children())
    executor = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_worker_init,
        initargs=(os.getpid(), list(sys.path)),
    )
    try:
        yield _LocalPool(executor, workers, before)
    finally:
        executor.shutdown(wait=True)


def _process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as dead: its parent may be waiting on our pipes)."""
    if os.path.isdir("/proc/self"):
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _worker_init(sweep_pid: int, sys_path: list[str] | None = None) -> None:
    """Pool workers leave Ctrl-C to the sweep process and exit if it dies (even by SIGKILL),
    and import from where the sweep process imports.

    The parent is watched by pid, not via ``getppid``: under forkserver a
    worker's parent is the fork server, which itself lives until its workers exit. A fork
    server started earlier has the ``sys.path`` of its own start, so the sweep's (where a
    config's strategy of one's own, ``mypkg.mod:my_strategy``, was found) is added here.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for entry in reversed(sys_path or []):
        if entry not in sys.path:
            sys.path.insert(0, entry)

    def watch() -> None:
        while _process_alive(sweep_pid):
            time.sleep(0.25)
        os._exit(1)

    threading.Thread(target=watch, name="kbsim-orphan-watch", daemon=True).start()


# ------------------------------------------------------------------ a Dask cluster


class _DaskPool:
    def __init__(self, client: Any, workers: int) -> None:
        self._client, self.workers = client, workers
        self._token = uuid.uuid4().hex[:8]

    def submit(self, batch: list[dict], run_day: Callable | str, index: int) -> Any:
        return self._client.submit(run_batch, batch, run_day, key=f"kbsim-batch-{self._token}-{index}", pure=False)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed

        return iter(as_completed(list(futures)))

    def release(self, future: Any) -> None:
        future.release()

    def cancel(self, futures: list[Any]) -> None:
        if futures:
            with contextlib.suppress(Exception):
                self._client.cancel(futures)


def check_scheduler_address(address: str) -> str:
    """Refuse, before anything runs, a ``--scheduler`` Dask cannot read as an address.

    Raises:
        SchedulerUnavailable: one line naming the address and what was expected.
    """
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise SchedulerUnavailable(
            f"--scheduler {address!r}: not the address of a Dask scheduler ({exc}); expected e.g. tcp://host:8786"
        ) from None
    return address


@contextlib.contextmanager
def dask_pool(workers: int, scheduler: str | None, log: Callable[[str], None] | None = None) -> Iterator[Pool]:
    """Batched tasks on an existing cluster (``scheduler``: its workers count) or a fresh
    LocalCluster of ``workers`` single-threaded processes."""
    require("dask", "distributed", "--executor dask")
    from distributed import Client, LocalCluster

    cluster = None
    if scheduler:
        check_scheduler_address(scheduler)
        try:
            client = Client(scheduler, timeout="30s")
        except (OSError, ValueError, TypeError) as exc:
            raise SchedulerUnavailable(
                f"scheduler: cannot connect to {scheduler!r} ({exc}); expected the address "
                "of a running Dask scheduler, e.g. tcp://host:8786"
            ) from None
    else:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,  # an interrupt's cancellations are expected, not news
        )
        client = Client(cluster)
        if log:
            log(f"dask LocalCluster with {workers} workers, dashboard {client.dashboard_link}")
    try:
        if scheduler:
            workers = max(1, len(client.scheduler_info().get("workers", {})))
        yield _DaskPool(client, workers)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def execute_local(
    jobs: list[dict],
    workers: int,
    batch_size: int | None,
    run_day: Callable | str,
    handle: Callable[[list[dict]], None],
) -> tuple[int, int]:
    """:func:`execute` on a :func:`local_pool` of ``workers`` processes; with one worker, in this
    process (:func:`in_process_pool`, one run a batch unless ``batch_size`` says otherwise)."""
    if workers == 1:
        return execute(in_process_pool(), jobs, batch_size or 1, run_day, handle)
    return execute(local_pool(workers), jobs, batch_size, run_day, handle)


def execute_dask(
    jobs: list[dict],
    workers: int,
    batch_size: int | None,
    run_day: Callable | str,
    handle: Callable[[list[dict]], None],
    scheduler: str | None,
    log: Callable[[str], None] | None = None,
) -> tuple[int, int]:
    """:func:`execute` on a :func:`dask_pool`."""
    return execute(dask_pool(workers, scheduler, log), jobs, batch_size, run_day, handle)


# ------------------------------------------------------------------------ signals


class Signals:
    """SIGINT/SIGTERM raise :class:`Interrupted`, except while a run's files are written."""

    def __init__(self) -> None:
        self._deferring = False
        self._pending: int | None = None
        self._previous: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        if self._deferring:
            self._pending = signum
            return
        raise Interrupted(signum)

    def __enter__(self) -> Signals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Hold a signal that arrives inside the block back until it ends, then raise it."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        if self._pending is not None:
            signum, self._pending = self._pending, None
            raise Interrupted(signum)
