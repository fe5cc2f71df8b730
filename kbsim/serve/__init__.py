"""The serving layer: the store exposed to real agents over MCP.

:mod:`kbsim.serve.server` builds the served knowledge base and the MCP server (and, with
``live``, a simulated day's people saving in accelerated wall-clock time);
:mod:`kbsim.serve.stdio` is its stdio transport, which answers every line the SDK cannot;
:mod:`kbsim.serve.http` serves the same server over Streamable HTTP (``kbsim serve --http``).
"""

from kbsim.serve.server import (
    DEFAULT_BUSY_TIMEOUT_S,
    DEFAULT_KB_ID,
    DEFAULT_SEED,
    DEFAULT_SPEED,
    FIRST_CLOCK_S,
    LAST_CLOCK_S,
    MAX_SPEED,
    DayClock,
    LockedStore,
    ServeConfigError,
    ServedKnowledgeBase,
    build_server,
    build_store,
    check_busy_timeout,
    check_speed,
    corpus_articles,
    latest_event_time_s,
    live_people,
    open_backend,
    serve,
    serve_stdio,
    served_corpus,
    start_live_people,
    tool_list,
    tool_result,
    unicode_only,
)

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_S",
    "DEFAULT_KB_ID",
    "DEFAULT_SEED",
    "DEFAULT_SPEED",
    "DayClock",
    "FIRST_CLOCK_S",
    "LAST_CLOCK_S",
    "LockedStore",
    "MAX_SPEED",
    "ServeConfigError",
    "ServedKnowledgeBase",
    "build_server",
    "build_store",
    "check_busy_timeout",
    "check_speed",
    "corpus_articles",
    "latest_event_time_s",
    "live_people",
    "open_backend",
    "serve",
    "serve_stdio",
    "served_corpus",
    "start_live_people",
    "tool_list",
    "tool_result",
    "unicode_only",
]
