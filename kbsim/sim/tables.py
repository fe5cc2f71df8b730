"""The day's tables: their names, the record each row is, the columns derived from the
records, and the one place the records become frames (:func:`tabulate`).

A day writes :data:`DAY_TABLES`: one row per record of :data:`RECORDS` (the detections
are tabulated from the log's flags, one row per citation and strategy), ``seed`` first,
then the record's fields, then :data:`DERIVED_COLUMNS`. A day with the design switches
also writes those of :data:`SWITCHED_TABLES` that have rows. Every layer above reads these
names from here (:mod:`kbsim.stats.metrics`, :mod:`kbsim.report.frames`), and
:func:`schema_digest` hashes them, with their types, so that a results directory can tell
a run written with other tables (:func:`kbsim.runner.results.results_layout`).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, fields
from functools import lru_cache
from operator import attrgetter

import pandas as pd

from kbsim.params import DayParams
from kbsim.sim.records import (
    AgentCheckRecord,
    CheckRecord,
    CitationRecord,
    DayLog,
    DetectionRecord,
    DraftCitationRecord,
    EditRecord,
    IntentRecord,
    ReviewRecord,
    SaveRecord,
    TextCheckRecord,
)
from kbsim.sim.transport import TransportRecord
from kbsim.store.timefmt import written_version_us

__all__ = [
    "DAY_TABLES",
    "DERIVED_COLUMNS",
    "NATIVE_COLUMNS",
    "RECORDS",
    "SWITCHED_TABLES",
    "key_columns",
    "schema_digest",
    "table_columns",
    "tabulate",
]

#: The tables a day writes (``run_day``'s output), in this order.
DAY_TABLES = ("citations", "checks", "detections", "edits", "saves")
#: The record type of each table's rows.
RECORDS = {
    "citations": CitationRecord,
    "checks": CheckRecord,
    "detections": DetectionRecord,
    "edits": EditRecord,
    "saves": SaveRecord,
}
#: The tables a day with the design switches adds, each when it has rows, with the record
#: of their rows (:attr:`kbsim.params.DayParams.uses_design_switches`). Not hashed into
#: :func:`schema_digest`: that would change the layout of every stored result.
SWITCHED_TABLES = {
    "intents": IntentRecord,
    "transport": TransportRecord,
    "agent_checks": AgentCheckRecord,
    "text_checks": TextCheckRecord,
    "draft_citations": DraftCitationRecord,
    "reviews": ReviewRecord,
}
#: The column every table starts with, and its type.
SEED_COLUMN = ("seed", "int")
#: Columns derived from the day's records, after the record's own fields, with their types:
#: when each citation went stale (the first save after its version), when its article was
#: first retitled and when unpublished after it (NaN: not within the simulated time), and
#: whether it was stale or gone by the end of the day.
DERIVED_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "citations": (
        ("first_stale_s", "float"),
        ("retitled_s", "float"),
        ("gone_s", "float"),
        ("stale_at_end", "bool"),
        ("gone_at_end", "bool"),
    ),
}
#: The column the runner adds to every row of a result table: the run's id.
RUN_ID_COLUMN = "run_id"


def table_columns(name: str) -> tuple[tuple[str, str], ...]:
    """``(column, type)`` of every column of the day's table ``name``, in order.

    The types are the record fields' annotations (``float``, ``str``, ``bool | None``).

    Raises:
        KeyError: ``name`` is not one of :data:`DAY_TABLES`.
    """
    if name not in RECORDS:
        raise KeyError(f"table: no day table {name!r}; expected one of {', '.join(DAY_TABLES)}")
    own = tuple((f.name, f.type if isinstance(f.type, str) else f.type.__name__) for f in fields(RECORDS[name]))
    return (SEED_COLUMN, *own, *DERIVED_COLUMNS.get(name, ()))


#: Columns a day writes itself (and ``run_id``); any other column of a result table is a run key.
NATIVE_COLUMNS = frozenset(
    {column for name in DAY_TABLES for column, _ in table_columns(name)} | {RUN_ID_COLUMN}
)


def key_columns(table: pd.DataFrame) -> list[str]:
    """The run keys of a result table: scenario and swept parameters (not the seed)."""
    return [c for c in table.columns if c not in NATIVE_COLUMNS]


def schema_digest() -> str:
    """A short, stable hash of every day table's name, column names and types, in order.

    Changes exactly when a table, a record field (or its type) or a derived column does.
    """
    schema = [[name, [list(column) for column in table_columns(name)]] for name in DAY_TABLES]
    return hashlib.sha256(json.dumps(schema, separators=(",", ":")).encode()).hexdigest()[:16]


# -- the frames -----------------------------------------------------------------------------------


def tabulate(log: DayLog, params: DayParams, seed: int) -> dict[str, pd.DataFrame]:
    """The day's records as tidy tables, one row per record, ``seed`` on every row."""
    staleness = _staleness_columns(log.citations, log.saves, params.day_s)
    tables = {
        "citations": _frame(log.citations, CitationRecord, seed, staleness),
        "checks": _frame(log.checks, CheckRecord, seed),
        "detections": _columns_frame(_detection_columns(log), seed),
        "edits": _frame(log.edits, EditRecord, seed),
        "saves": _frame(log.saves, SaveRecord, seed),
    }
    for name in SWITCHED_TABLES:
        records = getattr(log, name)
        if records:
            frame = pd.DataFrame([asdict(record) for record in records])
            frame.insert(0, SEED_COLUMN[0], pd.Series(seed, index=frame.index, dtype="int64"))
            tables[name] = frame
    return tables


def _detection_columns(log: DayLog) -> dict[str, list]:
    """The detections table as columns: one row per citation and strategy, its first flag
    and the last check's verdict (the fields of :class:`DetectionRecord`).

    The strategies are those the day's checks ran (the day's ``checks.strategies``,
    :mod:`kbsim.sim.strategies`; each notes its flags at every check), in the day's
    order. Empty when the day had no check (every citation is then censored at time
    0).
    """
    names = list(DetectionRecord.__dataclass_fields__)
    if log.last_check_s is None:
        return {name: [] for name in names}
    answer_ids = [cited.answer_id for cited in log.citations]
    positions = [cited.position for cited in log.citations]
    n = len(answer_ids)
    columns: dict[str, list] = {name: [] for name in names}
    missing = (math.nan, "")
    for strategy, last in log.last_flags.items():
        first = log.first_flags.get(strategy, {})
        firsts = [first.get(index, missing) for index in range(n)]
        columns["answer_id"] += answer_ids
        columns["position"] += positions
        columns["strategy"] += [strategy] * n
        columns["first_flagged_s"] += [flagged_s for flagged_s, _ in firsts]
        columns["first_label"] += [label for _, label in firsts]
        columns["flagged_at_last_check"] += [index in last for index in range(n)]
        columns["last_check_s"] += [log.last_check_s] * n
    return columns


def _frame(records: list, record_type, seed: int, extra: dict[str, pd.Series] | None = None) -> pd.DataFrame:
    """Built column by column: ``seed``, the record's fields, then ``extra``."""
    names = list(record_type.__dataclass_fields__)
    rows = list(map(attrgetter(*names), records)) if len(names) > 1 else [(getattr(r, names[0]),) for r in records]
    values = zip(*rows, strict=True) if records else ([] for _ in names)
    return _columns_frame(dict(zip(names, map(list, values), strict=True)), seed, extra)


def _columns_frame(columns: dict[str, list], seed: int, extra: dict[str, pd.Series] | None = None) -> pd.DataFrame:
    """``seed``, then the given columns (each a list, one value a row), then ``extra``."""
    n = len(next(iter(columns.values()), []))
    frame: dict = {SEED_COLUMN[0]: pd.Series(seed, index=range(n), dtype="int64")}
    for name, values in columns.items():
        frame[name] = values if n else pd.Series(dtype=object)
    return pd.DataFrame({**frame, **(extra or {})})


def _staleness_columns(
    citations: list[CitationRecord], saves: list[SaveRecord], day_s: float
) -> dict[str, pd.Series]:
    """The citations' :data:`DERIVED_COLUMNS`: when each went stale (the first save after its
    version), when its article was first retitled after it, and when unpublished (NaN: not
    within the simulated time), and whether it was stale or gone by ``day_s``."""
    version_us = lru_cache(maxsize=None)(written_version_us)  # a cited version is usually a save's too
    by_article: dict[str, list[tuple[int, float, str]]] = {}
    for save in saves:
        by_article.setdefault(save.article_id, []).append((version_us(save.version), save.time_s, save.kind))
    first_stale, retitled_s, gone_s = [], [], []
    for cited in citations:
        cited_us = version_us(cited.cited_version)
        stale_at, retitled_at, gone_at = math.nan, math.nan, math.nan
        for save_us, time_s, kind in by_article.get(cited.article_id, ()):
            if save_us > cited_us:
                if math.isnan(stale_at):
                    stale_at = time_s
                if kind == "content_and_title" and math.isnan(retitled_at):
                    retitled_at = time_s
                if kind == "unpublish":
                    gone_at = time_s
                    break
        first_stale.append(stale_at)
        retitled_s.append(retitled_at)
        gone_s.append(gone_at)
    first_stale_s = pd.Series(first_stale, dtype=float)
    gone = pd.Series(gone_s, dtype=float)
    return {
        "first_stale_s": first_stale_s,
        "retitled_s": pd.Series(retitled_s, dtype=float),
        "gone_s": gone,
        "stale_at_end": first_stale_s <= day_s,
        "gone_at_end": gone <= day_s,
    }
