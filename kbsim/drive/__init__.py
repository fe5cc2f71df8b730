"""Drive a live knowledge-base MCP server through a day: ``kbsim drive``.

:mod:`kbsim.drive.history` is the driven day's history (its fixed format, recorder,
writer and reader); :mod:`kbsim.drive.client` the synchronous, recording MCP tool client
(Streamable HTTP or stdio) every call goes through; :mod:`kbsim.drive.configured` the
server an experiment config names (``store.backend: server``), which the runner, the layer
above, hands its days. Nothing below this layer imports it: the simulation and the store do
not know a live server exists.
"""

from kbsim.drive.client import (
    DEFAULT_CALL_TIMEOUT_S,
    DriveError,
    McpConnection,
    ServerAddress,
    ServerError,
    ToolSession,
    TransportFailure,
)
from kbsim.drive.configured import server_address, server_day_store
from kbsim.drive.history import CallRecorder, History, HistoryError, read_history, write_history
from kbsim.drive.remote import FieldMap, RemoteBackend

__all__ = [
    "DEFAULT_CALL_TIMEOUT_S",
    "CallRecorder",
    "DriveError",
    "FieldMap",
    "History",
    "HistoryError",
    "McpConnection",
    "RemoteBackend",
    "ServerAddress",
    "ServerError",
    "ToolSession",
    "TransportFailure",
    "read_history",
    "server_address",
    "server_day_store",
    "write_history",
]
