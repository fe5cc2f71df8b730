"""The optional parts of kbsim (``pip install 'kbsim[EXTRA]'``) and the one check that names a missing one.

The core (``pip install kbsim``) runs studies and writes tidy results. Each extra adds
the third-party packages of one side feature; kbsim imports them only where that feature
starts, through :func:`require`, so a command that needs a missing extra says which in
one line instead of failing with a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from kbsim.errors import UsageError

#: Each extra, and what it adds.
EXTRAS = {
    "plots": "the figures and their pages (matplotlib)",
    "serve": "the MCP server, over stdio and Streamable HTTP (the official mcp SDK)",
    "dask": "the Dask executor, a local cluster or a scheduler (dask[distributed])",
    "notebooks": "running the notebooks (nbclient, nbformat, ipykernel, and the plots)",
}


class MissingExtraError(UsageError):
    """A feature's third-party package is not installed: names the extra that installs it."""

    def __init__(self, extra: str, module: str, feature: str) -> None:
        self.extra = extra
        self.module = module
        self.feature = feature
        super().__init__(
            f"{feature} needs the {extra!r} extra ({module} is not installed): pip install 'kbsim[{extra}]'"
        )


def require(extra: str, module: str, feature: str | None = None) -> ModuleType:
    """Import ``module`` of the extra ``extra``, or raise :class:`MissingExtraError` naming it.

    Args:
        extra: a key of :data:`EXTRAS`, the extra that installs ``module``.
        module: the module to import (``"mcp"``, ``"matplotlib"``, ``"distributed"``).
        feature: what needs it, for the message (default: the extra's description).

    Raises:
        KeyError: ``extra`` is not one of kbsim's extras (a programming error).
        MissingExtraError: ``module``, or a package it needs, is not installed.
    """
    if extra not in EXTRAS:
        raise KeyError(f"extra {extra!r}: kbsim's extras are {', '.join(EXTRAS)}")
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        raise MissingExtraError(extra, missing, feature or EXTRAS[extra]) from None
