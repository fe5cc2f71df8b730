"""kbsim: how fast an agent's knowledge-base citations go stale, what noticing costs,
and how often its edits collide.

The public API is listed in ``__all__``; see README.md for a tour.
"""

from kbsim.store import (
    DAY_START,
    TOOL_NAMES,
    Client,
    MemoryStore,
    SQLiteStore,
    Store,
    StoreBusyError,
    StoreFileError,
    ToolDefinition,
    ToolError,
    format_version,
    json_size,
    parse_version,
    tool_definitions,
)
from kbsim.version import __version__

__all__ = [
    "DAY_START",
    "TOOL_NAMES",
    "Client",
    "MemoryStore",
    "SQLiteStore",
    "Store",
    "StoreBusyError",
    "StoreFileError",
    "ToolDefinition",
    "ToolError",
    "__version__",
    "format_version",
    "json_size",
    "parse_version",
    "tool_definitions",
]
