"""A live server named in an experiment config: ``store: {backend: server, server: {...}}``.

The runner runs every day of a sweep through :func:`server_day_store`, which turns the day's
``store.server`` (:class:`~kbsim.params.ServerParams`) into what ``kbsim drive`` hands its
day: a :class:`~kbsim.drive.remote.RemoteBackend` (the day's store and the agent's client
over the official MCP client) and, with ``speed``, the real-time clock
(:class:`~kbsim.drive.day.PacedEnvironment`). Any shipped experiment then runs against a
server by adding those keys; its tables are what the server did, in the same layout.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import simpy
import yaml

from kbsim.drive.client import DriveError, ServerAddress
from kbsim.drive.day import PacedEnvironment
from kbsim.drive.remote import RemoteBackend
from kbsim.params import DayParams, ServerParams

__all__ = ["server_address", "server_day_store"]


def server_address(server: ServerParams, seed: int, day_config: str | Path) -> ServerAddress:
    """The address of ``server`` for the day of ``seed``: its URL, or its command with
    ``{seed}`` and ``{day_config}`` filled in.

    Raises:
        DriveError: the command names no program on PATH, or the URL is not http(s).
    """
    if server.url is not None:
        return ServerAddress.http(server.url, server.header_env)
    assert server.command is not None  # ServerParams holds exactly one of the two
    try:
        command = [part.format(seed=seed, day_config=str(day_config)) for part in server.command]
    except (KeyError, IndexError, ValueError) as exc:
        raise DriveError(f"store.server.command: {exc!s} is no placeholder; use {{seed}} and {{day_config}} "
                         "(write a literal brace twice)") from None
    return ServerAddress.stdio(command)


@contextlib.contextmanager
def server_day_store(params: DayParams, seed: int) -> Iterator[tuple[RemoteBackend, simpy.Environment | None]]:
    """The store factory and clock for one day of ``params`` (``store.backend: server``).

    Yields ``(backend, env)``: pass them to :func:`kbsim.sim.day.run_day` as ``store`` and
    ``env`` (``env`` is None without ``speed``: the day then runs as fast as the server
    answers). The connection is closed, and a stdio server stopped, on leaving.
    """
    server = params.store.server
    if server is None:
        raise ValueError("server_day_store needs store.backend 'server' with store.server")
    with tempfile.TemporaryDirectory(prefix="kbsim-day-") as folder:
        day_config = Path(folder) / "day.yaml"
        day = params.model_dump(mode="json", exclude={"store"})
        day_config.write_text(yaml.safe_dump(day, sort_keys=True), encoding="utf-8")
        address = server_address(server, seed, day_config)
        env = None if server.speed is None else PacedEnvironment(server.speed)
        with RemoteBackend(address, kb_id=server.kb_id, timeout_s=server.timeout_s) as backend:
            yield backend, env
