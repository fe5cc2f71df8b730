"""The knowledge-base store and its four tools (no SimPy in here)."""

from kbsim.store.analyzer import ASCII, Analyzer, analyzer_for
from kbsim.store.arena import ArenaIndex
from kbsim.store.backends import STORE_BACKENDS, store_backend
from kbsim.store.bm25 import BM25Index, tokenize
from kbsim.store.bulk import ArticleWords
from kbsim.store.client import DEFAULT_POLL_LIMIT, DEFAULT_SEARCH_LIMIT, Client
from kbsim.store.errors import ERROR_CODES, ToolError
from kbsim.store.memory import MemoryStore
from kbsim.store.protocol import Store, StoreFactory
from kbsim.store.rules import arguments_digest, article_id_for, json_size
from kbsim.store.schema import TOOL_NAMES, ToolDefinition, tool_definitions, validate_arguments
from kbsim.store.sqlite import SQLiteStore, StoreBusyError, StoreFileError
from kbsim.store.timefmt import DAY_START, format_version, parse_version, seconds_to_us
from kbsim.store.written import WrittenArticles

__all__ = [
    "ASCII",
    "Analyzer",
    "ArenaIndex",
    "ArticleWords",
    "BM25Index",
    "Client",
    "DAY_START",
    "DEFAULT_POLL_LIMIT",
    "DEFAULT_SEARCH_LIMIT",
    "ERROR_CODES",
    "MemoryStore",
    "SQLiteStore",
    "STORE_BACKENDS",
    "Store",
    "StoreBusyError",
    "StoreFactory",
    "StoreFileError",
    "TOOL_NAMES",
    "ToolDefinition",
    "ToolError",
    "arguments_digest",
    "analyzer_for",
    "article_id_for",
    "format_version",
    "json_size",
    "parse_version",
    "seconds_to_us",
    "store_backend",
    "tokenize",
    "tool_definitions",
    "validate_arguments",
    "WrittenArticles",
]
