"""The tools' definitions as data: ``tools.json``, a copy of the service's own listing (read by
:mod:`kbsim.store.schema`, and by ``kbsim tools`` without importing the store)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["tools_document"]


@cache
def tools_document() -> dict[str, Any]:
    """The raw ``tools.json`` document shipped with the package (read without importing the store)."""
    text = resources.files("kbsim.spec").joinpath("tools.json").read_text(encoding="utf-8")
    return json.loads(text)
