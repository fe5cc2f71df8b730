"""``kbsim check`` (issue 36): every injected fault is flagged as exactly its property, with
the calls that show it; clean servers hold; bad input is one line, exit 2, nothing written.

The faulty servers (tests/faulty_server.py) are served over Streamable HTTP in a thread of
the test process, and each is driven through a short check day (one racing client, two
rounds): the probes expose every fault; validation/check_days.py drives full-size days.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("mcp")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import faulty_server  # noqa: E402
from drive_servers import http_server  # noqa: E402

from kbsim.check import PROPERTIES, check_folders  # noqa: E402
from kbsim.check.day import CheckDayOptions, check_day, cut_to_milliseconds  # noqa: E402
from kbsim.cli import main  # noqa: E402
from kbsim.drive.client import ServerAddress  # noqa: E402
from kbsim.drive.history import read_history  # noqa: E402

#: A short day: enough for every fault to show (through the probes), a second or two.
SHORT = CheckDayOptions(racers=1, rounds=2, hot=2, seed=3)


def _driven(fault: str, out: Path, admin: bool = True) -> Path:
    with faulty_server.serving(fault, admin=admin) as url:
        check_day(ServerAddress.http(url), out, SHORT)
    return out


@pytest.fixture(scope="module")
def clean_history(tmp_path_factory) -> Path:
    """One check day against the faulty server with no fault switched on."""
    return _driven("none", tmp_path_factory.mktemp("check") / "clean")


@pytest.mark.parametrize("fault", sorted(set(faulty_server.FAULT_PROPERTY) - {"wrong_annotation"}))
def test_each_fault_is_flagged_as_exactly_its_property(fault, tmp_path):
    folder = _driven(fault, tmp_path / fault)
    card = check_folders([folder])
    violated = {verdict.property: verdict for verdict in card.violated}
    assert set(violated) == {faulty_server.FAULT_PROPERTY[fault]}, {p: v.detail for p, v in violated.items()}
    ids = violated[faulty_server.FAULT_PROPERTY[fault]].call_ids()
    calls = read_history(folder).calls
    assert ids and set(ids) <= set(calls["call_id"])


def test_a_stdio_server_is_checked_after_double_dash_and_a_violation_exits_1(tmp_path, capsys):
    """The tenth fault, over stdio through the command line: the card printed, the JSON written."""
    server = [sys.executable, str(Path(faulty_server.__file__)), "--fault", "wrong_annotation"]
    status = main(["check", "--yes-edit-this-server", "--racers", "2", "--rounds", "2", "--json",
                   str(tmp_path / "card.json"), "--", *server])
    assert status == 1
    table = capsys.readouterr().out
    violated = [line.split()[1] for line in table.splitlines()[3:] if line.split()[2] == "violated"]
    assert violated == ["marking.annotations"]
    card = json.loads((tmp_path / "card.json").read_text())
    assert card["histories"] == ["(the check's day, not kept: --out DIR keeps it)"]


def test_the_clean_fixture_holds_every_property(clean_history):
    card = check_folders([clean_history])
    assert [(v.property, v.status) for v in card.verdicts] == [(p, "holds") for p in PROPERTIES]


def test_kbsim_serve_over_http_with_sqlite_holds_everything_and_the_card_is_written(tmp_path):
    card_json, card_md = tmp_path / "card.json", tmp_path / "card.md"
    with http_server(tmp_path / "serve.log", "--db", str(tmp_path / "kb.sqlite"), "--admin-tools",
                     "--corpus", "synthetic") as url:
        status = main(["check", "--url", url, "--yes-edit-this-server", "--racers", "2", "--rounds", "2",
                       "--out", str(tmp_path / "day"), "--json", str(card_json), "--markdown", str(card_md)])
    assert status == 0
    card = json.loads(card_json.read_text())
    assert [(v["property"], v["status"]) for v in card["verdicts"]] == [(p, "holds") for p in PROPERTIES]
    assert card_md.read_text().count("| holds |") == len(PROPERTIES)
    # the kept history is checked again the same way
    assert main(["check", str(tmp_path / "day")]) == 0


def test_a_server_lacking_the_unpublish_tool_leaves_advice_3_not_observable(tmp_path):
    card = check_folders([_driven("none", tmp_path / "no-admin", admin=False)])
    statuses = {v.property: (v.status, v.detail) for v in card.verdicts}
    assert {p for p, (s, _) in statuses.items() if s == "not observable"} == {"published.unpublish_event",
                                                                            "published.hidden"}
    assert "lists no unpublish_knowledge_article" in statuses["published.hidden"][1]
    assert {s for p, (s, _) in statuses.items() if not p.startswith("published.")} == {"holds"}


def _damaged(clean: Path, tmp_path: Path, how: str) -> Path:
    folder = tmp_path / how
    shutil.copytree(clean, folder)
    meta_path = folder / "history.json"
    meta = json.loads(meta_path.read_text())
    if how == "partial":
        meta.update(complete=False, stopped_because="interrupted")
    elif how == "other_version":
        meta.update(format_version=2, kbsim_version="9.9.9")
    elif how == "other_kbsim":
        meta.update(kbsim_version="0.0.1")
    elif how == "damaged":
        (folder / "calls.parquet").write_bytes(b"not parquet")
    elif how == "unfinished":
        meta_path.unlink()
        return folder
    meta_path.write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize("how, said", [("partial", "partial history"), ("other_version", "format_version 2"),
                                       ("other_kbsim", "driven by kbsim 0.0.1; this is kbsim"),
                                       ("damaged", "cannot read a table"), ("unfinished", "not a kbsim history")])
def test_a_bad_history_is_one_line_exit_2_and_nothing_written(clean_history, tmp_path, capsys, how, said):
    folder = _damaged(clean_history, tmp_path, how)
    out = tmp_path / "card.json"
    assert main(["check", str(clean_history), str(folder), "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kbsim check: ") and said in err[0], err
    assert not out.exists()


def test_a_day_needs_the_safety_flag_and_refuses_mixed_targets(clean_history, tmp_path, capsys):
    assert main(["check", "--url", "http://127.0.0.1:9/mcp", "--out", str(tmp_path / "d")]) == 2
    assert "--yes-edit-this-server" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
    assert main(["check", str(clean_history), "--url", "http://127.0.0.1:9/mcp", "--yes-edit-this-server"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["check"]) == 2


def test_the_card_renders_as_table_json_and_markdown(clean_history):
    card = check_folders([clean_history, clean_history])
    table = card.table().splitlines()
    assert table[0].startswith("kbsim check ") and "2 histories" in table[0]
    assert len(table) == 3 + len(PROPERTIES)
    assert json.loads(card.json_text())["calls"] == 2 * len(read_history(clean_history).calls)
    assert card.markdown().count("\n| ") == 1 + len(PROPERTIES)


def test_versions_are_cut_to_milliseconds_as_a_javascript_date_writes_them():
    assert cut_to_milliseconds("2026-01-05T09:00:01.123456Z") == "2026-01-05T09:00:01.123Z"
    assert cut_to_milliseconds("2026-01-05T09:00:01Z") == "2026-01-05T09:00:01.000Z"
    assert cut_to_milliseconds("v17") == "v17"


def test_the_gap_fault_skips_one_number_after_every_fifth_and_maps_cursors_back():
    shown = [faulty_server.gap_out(s) for s in range(1, 13)]
    assert shown == [1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14]
    assert [faulty_server.gap_in(s) for s in shown] == list(range(1, 13))
    assert faulty_server.gap_in(5) == 4  # a skipped number resumes after the one before it


def test_a_history_of_calls_reads_back_unchanged(clean_history):
    calls = read_history(clean_history).calls
    assert calls["call_id"].tolist() == list(range(len(calls)))
    assert calls["actor"].str.startswith("probe").any() and calls["actor"].str.startswith("race").any()


def test_versions_are_ordered_to_the_microsecond_whatever_unit_pandas_infers():
    from kbsim.check.observe import version_us

    got = version_us(pd.Series(["2026-01-05T09:00:05.096085Z", "2026-01-05T09:00:05Z", "2026-01-05T09:00:05.096Z",
                                None, "v1"]))
    assert got.tolist()[:3] == [1767603605096085.0, 1767603605000000.0, 1767603605096000.0]
    assert got.iloc[3:].isna().all()
