"""Advice 5, marking: ``tools/list`` says which tools only read and which one writes.

``marking.annotations``: search, read and poll carry ``readOnlyHint: true``; the edit is
not read-only and not marked non-destructive or closed-world (``destructiveHint`` and
``openWorldHint`` true, their MCP defaults when absent).
"""

from __future__ import annotations

from kbsim.check.card import Verdict
from kbsim.check.observe import Observed
from kbsim.check.verdicts import holds, not_observable, violated
from kbsim.drive.remote import EDIT, POLL, READ, SEARCH

__all__ = ["tool_hints"]

#: Per tool: hint -> (what it must be, its MCP default when absent).
RULES = {
    SEARCH: {"readOnlyHint": (True, False)},
    READ: {"readOnlyHint": (True, False)},
    POLL: {"readOnlyHint": (True, False)},
    EDIT: {"readOnlyHint": (False, False), "destructiveHint": (True, True), "openWorldHint": (True, True)},
}


def tool_hints(observed: Observed) -> Verdict:
    """``marking.annotations`` (see the module)."""
    prop = "marking.annotations"
    if not observed.tools:
        return not_observable(prop, "the history holds no tools/list answer")
    by_name = {tool.get("name"): tool for tool in observed.tools}
    wrong, seen = [], 0
    for name, hints in RULES.items():
        if name not in by_name:
            continue
        given = by_name[name].get("annotations") or {}
        for hint, (want, default) in hints.items():
            seen += 1
            value = given.get(hint, default)
            if value is not want:
                wrong.append(f"{name} {hint} {str(value).lower()}")
    if seen == 0:
        return not_observable(prop, "the server lists none of the four tools")
    if wrong:
        return violated(prop, seen, "marked " + ", ".join(wrong), observed.listed)
    return holds(prop, seen, "hints as the tools do")
