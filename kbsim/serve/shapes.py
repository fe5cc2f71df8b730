"""What the served tools return, as MCP clients see it: the JSON text, the ``outputSchema``
each tool declares, and the cursor's clearer name.

``kbsim/spec/results.json`` holds each tool's ``outputSchema`` (``tools.json`` is the
service's own listing and holds none). A poll result is served with ``last_sequence`` (the
sequence of the last event returned: pass it as ``after_sequence`` to read on) beside
``next_sequence``, the same number under the name kept for one more release. The store and
the simulated day keep the store's shape, so the day's measured bytes do not change.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

POLL = "poll_resource_events"


@cache
def _results_document() -> dict[str, Any]:
    return json.loads(resources.files("kbsim.spec").joinpath("results.json").read_text(encoding="utf-8"))


def output_schema(name: str) -> dict[str, Any]:
    """The ``outputSchema`` tool ``name`` declares: the shape of its ``structuredContent``."""
    return copy.deepcopy(_results_document()["results"][name])


def served_payload(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A successful result of tool ``name`` as served: a poll's gains ``last_sequence``."""
    if name != POLL or "next_sequence" not in payload:
        return payload
    return {"events": payload["events"], "last_sequence": payload["next_sequence"],
            "next_sequence": payload["next_sequence"], "has_more": payload["has_more"]}


def unicode_only(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD.

    The wire carries UTF-8 text only; a string stored through the Python API
    may hold a lone surrogate, which no JSON reply can carry.
    """
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # a surrogate pair becomes its character, each lone surrogate one U+FFFD
            return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return value
    if isinstance(value, dict):
        return {unicode_only(k): unicode_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unicode_only(v) for v in value]
    return value


def json_text(payload: Any) -> str:
    """``payload`` as the compact JSON text a result carries (lone surrogates as U+FFFD)."""
    return json.dumps(unicode_only(payload), separators=(",", ":"), ensure_ascii=False)
