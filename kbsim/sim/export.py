"""A simulated day written as traces: the logs of saves and questions that replay it.

:func:`export_day` turns a day simulated with ``keep_activity`` into the rows that
replay it, and :func:`export_run` does so for a run of a results directory (``kbsim
trace export``). Exported and replayed (:mod:`kbsim.sim.replay`), a day gives identical
tables.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pandas as pd

from kbsim.errors import UsageError
from kbsim.files import FileReadError, read_regular
from kbsim.inputs.traces import QuestionRow, SaveRow, write_questions_trace, write_saves_trace
from kbsim.params import DayParams
from kbsim.sim.day import simulate_day
from kbsim.sim.records import DayLog

__all__ = ["ExportError", "export_day", "export_run"]


def export_day(log: DayLog, day_s: float) -> tuple[list[SaveRow], list[QuestionRow]]:
    """The rows that replay a day kept with ``keep_activity``: people's saves within the day
    (with the text they wrote) and every question (time, article, query)."""
    if log.save_texts is None or log.questions is None:
        raise ValueError("the day did not keep its activity: simulate it with keep_activity=True")
    if any(save.kind == "publish" for save in log.saves):
        raise ValueError("a day whose people publish new articles (saves.replace_unpublished) cannot be "
                         "exported as traces: a trace names only the articles the day starts with")
    people = [save for save in log.saves if save.actor == "people"]
    saves = [
        SaveRow(save.time_s, save.article_id, save.kind, title, content)
        for save, (title, content) in zip(people, log.save_texts, strict=True)
        if save.time_s <= day_s
    ]
    questions = [QuestionRow(time_s, article_id, query) for time_s, article_id, query in log.questions]
    return saves, questions


class ExportError(UsageError, RuntimeError):
    """A run that cannot be exported: names the run directory and why."""


def _stored_table(run_dir: Path, marker: dict, name: str) -> pd.DataFrame:
    """The run's ``name`` table as its ``run.json`` records it (size and sha256), read within
    that size; a file missing, grown, cut short, changed or not Parquet is an :class:`ExportError`."""
    file = f"{name}.parquet"
    entry = marker.get("files", {}).get(file) if isinstance(marker.get("files"), dict) else None
    size = entry.get("bytes") if isinstance(entry, dict) else None
    if not isinstance(entry, dict) or not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ExportError(f"{run_dir}: not a completed run of a results directory (run.json records no {file})")
    try:
        data = read_regular(run_dir / file, size, what=file)
    except FileReadError as exc:
        raise ExportError(f"{run_dir}: the run is damaged ({file}: {exc.problem}); run it again") from None
    if len(data) != size or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        raise ExportError(f"{run_dir}: the run is damaged ({file} does not match its size and sha256 in run.json); "
                          "run it again")
    try:
        return pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - whatever pyarrow makes of bytes that are not a table
        raise ExportError(f"{run_dir}: the run is damaged ({file} is not a Parquet table: "
                          f"{type(exc).__name__}); run it again") from None


def export_run(run_dir: str | Path, out_dir: str | Path, *, overwrite: bool = False) -> tuple[Path, Path]:
    """Write ``saves.csv`` and ``questions.csv`` that replay the run in ``run_dir``.

    The run's day is simulated again from its ``run.json`` (parameters and seed), with
    its activity kept, and its tables must equal the run's own: what is written is
    exactly what that run did.
    """
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    try:
        marker = json.loads(read_regular(run_dir / "run.json", 1 << 24, what="run.json"))
        params, seed = DayParams.model_validate(marker["params"]), int(marker["seed"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise ExportError(f"{run_dir}: not a completed run of a results directory (run.json: {exc})") from None
    targets = (out_dir / "saves.csv", out_dir / "questions.csv")
    existing = [str(path) for path in targets if path.exists()]
    if existing and not overwrite:
        raise ExportError(f"{existing[0]} exists; choose another --out or pass --force")
    blocking = next((p for p in (out_dir, *out_dir.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:  # refused before the day is simulated again
        raise ExportError(f"{blocking}: is a file; expected a folder for saves.csv and questions.csv (--out)")
    if params.saves.replace_unpublished:
        raise ExportError(f"{run_dir}: a day with saves.replace_unpublished cannot be exported as traces "
                          "(a trace names only the articles the day starts with)")
    stored_tables = {name: _stored_table(run_dir, marker, name) for name in ("saves", "citations")}
    tables, log = simulate_day(params, seed, keep_activity=True)
    for name, stored in stored_tables.items():
        columns = list(tables[name].columns)
        if list(stored.columns[-len(columns):]) != columns or not stored[columns].reset_index(drop=True).equals(
                tables[name]):
            raise ExportError(
                f"{run_dir}: this kbsim simulates a different {name} table for the run's parameters and seed; "
                "export it with the kbsim that wrote it")
    saves, questions = export_day(log, params.day_s)
    try:  # then each file is written atomically: a failure leaves the previous one whole (FileWriteError)
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        problem = "is a file; expected a folder" if out_dir.is_file() else f"cannot create it: {exc.strerror or exc}"
        raise ExportError(f"{out_dir}: {problem} for saves.csv and questions.csv (--out)") from None
    return write_saves_trace(targets[0], saves), write_questions_trace(targets[1], questions)
