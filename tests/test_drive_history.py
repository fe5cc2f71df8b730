"""The driven day's history format (kbsim.drive.history): recorded, written, read back,
and refused in one line when it is of another format or version."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading

import pandas as pd
import pytest

from kbsim.drive.history import (
    CALL_COLUMNS,
    CallRecorder,
    HistoryError,
    canonical_json,
    history_meta,
    read_history,
    redacted_url,
    write_history,
)


def _meta(**changes):
    meta = history_meta(complete=True, stopped_because=None,
                        server={"transport": "http", "url": "http://user:secret@127.0.0.1:8765/mcp"},
                        tools=[{"name": "read_knowledge_article"}], field_map={"citation_version": "updated_at"},
                        seed=3, speed=60.0, params={"day_hours": 1}, started_utc="2026-01-01T00:00:00Z", calls=2)
    meta.update(changes)
    return meta


def test_arguments_are_canonical_and_content_is_digested():
    text = "Die Straße ist nass."
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert canonical_json({"b": 1, "a": {"content": text, "title": "T"}}) == (
        '{"a":{"content":"sha256:' + digest + '","title":"T"},"b":1}')


def test_a_url_loses_its_credentials():
    assert redacted_url("https://me:pw@example.org:8443/mcp?x=1") == "https://example.org:8443/mcp?x=1"
    assert redacted_url("http://127.0.0.1:9/mcp") == "http://127.0.0.1:9/mcp"


def test_calls_from_several_threads_are_numbered_in_start_order_and_written_and_read_back(tmp_path):
    recorder = CallRecorder(sim_clock=lambda: 12.5)

    def one(i: int) -> None:
        call_id, started, sim_s = recorder.begin()
        recorder.finish(call_id, started, sim_s, client=f"race-{i}", actor="check:reread",
                        tool="read_knowledge_article", arguments={"article_id": f"a{i}", "content": "x"},
                        ok=i % 2 == 0, error_code=None if i % 2 == 0 else "version_conflict",
                        result={"updated_at": "v"} if i % 2 == 0 else None, bytes_sent=10, bytes_received=20)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    calls = recorder.frame()
    assert list(calls.columns) == list(CALL_COLUMNS)
    assert calls["call_id"].tolist() == list(range(8))
    assert (calls["started_s"] <= calls["ended_s"]).all() and (calls["sim_s"] == 12.5).all()
    tables = {"citations": pd.DataFrame({"seed": [3], "article_id": ["a0"]})}
    folder = write_history(tmp_path / "day", _meta(calls=len(calls)), calls, tables)
    history = read_history(folder)
    assert history.complete and history.meta["server"]["url"] == "http://127.0.0.1:8765/mcp"
    assert "secret" not in (folder / "history.json").read_text()
    pd.testing.assert_frame_equal(history.calls, calls)
    pd.testing.assert_frame_equal(history.tables["citations"], tables["citations"])
    assert sorted(p.name for p in folder.iterdir()) == ["calls.parquet", "citations.parquet", "history.json"]


def test_an_empty_history_is_a_table_of_the_schema(tmp_path):
    calls = CallRecorder().frame()
    assert calls.empty and dict(calls.dtypes.astype(str)) == CALL_COLUMNS
    history = read_history(write_history(tmp_path, _meta(complete=False, stopped_because="interrupted"), calls, {}))
    assert not history.complete and history.meta["stopped_because"] == "interrupted"
    assert math.isnan(CallRecorder().begin()[2])


@pytest.mark.parametrize(("change", "message"), [
    ({"format": "other"}, "not a kbsim-history meta (format 'other')"),
    ({"format_version": 2}, "kbsim-history format_version 2 (written by kbsim"),
])
def test_a_history_of_another_format_or_version_is_refused_in_one_line(tmp_path, change, message):
    folder = write_history(tmp_path, _meta(), CallRecorder().frame(), {})
    meta = json.loads((folder / "history.json").read_text())
    meta.update(change)
    (folder / "history.json").write_text(json.dumps(meta))
    with pytest.raises(HistoryError, match=re.escape(message)) as refused:
        read_history(folder)
    assert "\n" not in str(refused.value)


def test_a_folder_without_a_meta_was_never_finished_and_is_refused(tmp_path):
    with pytest.raises(HistoryError, match="not a kbsim history"):
        read_history(tmp_path)
    with pytest.raises(HistoryError, match="refusing to write a meta"):
        write_history(tmp_path, {**_meta(), "format_version": 9}, CallRecorder().frame(), {})
    assert list(tmp_path.iterdir()) == []
