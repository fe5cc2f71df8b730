"""``kbsim drive``: a small day driven at a high speed factor against ``kbsim serve --http
--db`` (127.0.0.1, a free port) and ``kbsim serve`` over stdio, each beside its in-process
twin; and every refusal one line, exit 2, nothing written."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from drive_servers import REPO, http_server, serve_command, silent_server, status_server

from kbsim.cli import main
from kbsim.drive.client import DriveError
from kbsim.drive.compare import against_model, model_page
from kbsim.drive.history import read_history
from kbsim.sim.tables import DAY_TABLES

pytestmark = pytest.mark.xdist_group("drive-day")

SMALL_DAY = """\
day_hours: 1
corpus: {articles: 30}
saves: {count: 30}
questions: {count: 20}
edit: {delay_s: 60}
"""
SEED = 3
SPEED = "600"  # the 1-hour day in 6 s


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("drive-config") / "small.yaml"
    path.write_text(SMALL_DAY)
    return path


def _serve_args(config: Path, *extra: str) -> list[str]:
    return ["--corpus", "synthetic", "--seed", str(SEED), "--config", str(config), *extra]


def _drive(config: Path, out: Path, *server: str, extra: tuple[str, ...] = ()) -> int:
    return main(["drive", "--corpus", "synthetic", "--seed", str(SEED), "--config", str(config),
                 "--speed", SPEED, "--out", str(out), "--yes-edit-this-server", *extra, *server])


def _same_day(out: Path) -> None:
    """The driven day's tables are the model's, table by table (kbsim serve is the model's store)."""
    history = read_history(out)
    assert history.complete and history.meta["stopped_because"] is None
    _same_tables(history.tables, {name: pd.read_parquet(out / "model" / f"{name}.parquet") for name in DAY_TABLES})


#: What kbsim serve adds to a poll page the model's store does not: its cursor again, as the
#: service serves it (kbsim.serve.shapes), ``"last_sequence":N,``: a few bytes per page.
LAST_SEQUENCE_BYTES_PER_PAGE = range(17, 26)


def _same_tables(driven_tables, model_tables) -> None:
    """The driven day's tables are the model's, but for the versions (the server's clock) and a
    poll check's bytes, larger by what kbsim serve adds to each poll page (its last_sequence)."""
    for name in DAY_TABLES:
        model, driven = model_tables[name], driven_tables[name]
        keep = [c for c in model.columns if c not in ("cited_version", "version", "time_s", "edit_s", "bytes")]
        if name == "saves":
            keep = ["actor", "kind", "article_id"]
        pd.testing.assert_frame_equal(driven[keep].reset_index(drop=True), model[keep].reset_index(drop=True),
                                      check_dtype=False, obj=name)
    model, driven = model_tables["checks"], driven_tables["checks"]
    polls = (model["strategy"] == "poll").to_numpy()
    assert (driven["bytes"].to_numpy()[~polls] == model["bytes"].to_numpy()[~polls]).all()
    extra = driven["bytes"].to_numpy()[polls] - model["bytes"].to_numpy()[polls]
    assert all(min(LAST_SEQUENCE_BYTES_PER_PAGE) <= e <= max(LAST_SEQUENCE_BYTES_PER_PAGE) * 10 for e in extra), extra


def test_a_small_day_driven_over_http_with_admin_tools_is_the_model_day(tmp_path, config, capsys):
    out = tmp_path / "day"
    with http_server(tmp_path / "serve.log", *_serve_args(config, "--db", str(tmp_path / "kb.db"),
                                                          "--admin-tools")) as url:
        assert _drive(config, out, "--url", url, extra=("--max-calls-per-second", "500")) == 0
    err = capsys.readouterr().err
    assert "plan: a 1-hour day in 0.1 min wall" in err and "20 questions" in err
    assert "no admin tools" not in err
    history = read_history(out)
    calls = history.calls
    assert set(calls["client"]) == {"agent", "people", "truth"}
    assert {"probe", "person_read", "person_save", "ask_search", "ask_read", "check:title", "check:reread",
            "check:poll", "agent_edit", "agent_replay", "admin", "truth:sequence"} <= set(calls["actor"])
    assert calls["call_id"].tolist() == list(range(len(calls))) and history.meta["calls"] == len(calls)
    day_calls = calls[calls["actor"] != "probe"]
    tool_calls = calls[calls["tool"] != "tools/list"]
    assert (tool_calls["started_s"].diff().dropna() >= 1 / 500 - 1e-4).all()  # --max-calls-per-second 500
    assert day_calls["sim_s"].notna().all() and calls["ok"].sum() >= len(calls) - 10
    assert history.meta["server"]["transport"] == "http" and history.meta["server"]["name"] == "kbsim"
    assert [tool["name"] for tool in history.meta["tools"]][-2:] == ["publish_knowledge_article",
                                                                      "unpublish_knowledge_article"]
    assert (history.tables["saves"]["kind"] == "unpublish").any()
    assert len(history.tables["edits"]) > 0 and history.tables["edits"]["replay_ok"].dropna().all()
    _same_day(out)
    table, notes = against_model([out])
    # one day: no interval; equal but for the poll's bytes, larger by kbsim serve's last_sequence
    assert table[table["name"] != "bytes_per_check[poll]"]["agree"].all() and notes["days"] == 1
    poll = table[table["name"] == "bytes_per_check[poll]"].iloc[0]
    assert 0 < poll["measured"] - poll["model"] < 10 * max(LAST_SEQUENCE_BYTES_PER_PAGE)
    assert set(table["name"]) >= {"stale_citation_share@end", "title_recall@end", "calls_per_check[poll]",
                                  "bytes_per_check[title]", "rejection_rate", "replay_success"}
    page = model_page(table, notes, "kbsim drive-report x")
    assert "# Your server against the model" in page
    # the page says why the poll's bytes differ, from the history's own results: all of it
    fields, per_check = notes["extra_bytes"]["poll"]
    assert fields == ["last_sequence"] and list(notes["extra_bytes"]) == ["poll"]
    assert math.isclose(per_check, poll["measured"] - poll["model"], rel_tol=1e-9)
    assert "carry `last_sequence`, which the model's store does not return" in page
    assert "100% of the difference" in page and "Every other figure measured equals the model's exactly" in page


def test_a_small_day_driven_over_stdio_without_admin_tools_runs_without_unpublishes(tmp_path, config, capsys):
    out = tmp_path / "day"
    assert _drive(config, out, "--", *serve_command(*_serve_args(config))) == 0
    assert "the day runs without unpublishes" in capsys.readouterr().err
    history = read_history(out)
    assert history.meta["server"]["transport"] == "stdio"
    assert history.meta["params"]["saves"]["mix"]["unpublish"] == 0
    assert not (history.tables["saves"]["kind"] == "unpublish").any()
    assert json.loads((out / "drive.json").read_text())["without_unpublishes"] is True
    _same_day(out)
    assert main(["drive-report", str(out), "--out", str(tmp_path / "page.md")]) == 0
    assert "without unpublishes" in (tmp_path / "page.md").read_text()


def _refused(capsys, argv: list[str], message: str, out: Path) -> None:
    assert main(argv) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if "error" in line or "refus" in line
             or message in line]
    assert any(message in line for line in lines), lines
    assert not out.exists() or not any(out.iterdir())


def test_no_safety_flag_prints_the_plan_and_refuses(tmp_path, config, capsys):
    out = tmp_path / "day"
    assert main(["drive", "--corpus", "synthetic", "--config", str(config), "--out", str(out),
                 "--url", "http://127.0.0.1:9/mcp"]) == 2
    err = capsys.readouterr().err
    assert "plan: a 1-hour day" in err and "calls per simulated hour" not in err
    assert "refusing to start without --yes-edit-this-server" in err and "staging copy" in err
    assert not out.exists()


def test_an_unreachable_url_a_401_and_a_silent_server_are_one_line(tmp_path, config, capsys, monkeypatch):
    out = tmp_path / "day"
    _refused(capsys, ["drive", "--corpus", "synthetic", "--config", str(config), "--out", str(out),
                      "--yes-edit-this-server", "--url", "http://127.0.0.1:9/mcp", "--timeout", "5"],
             "cannot connect", out)
    monkeypatch.setenv("KBSIM_DRIVE_TOKEN", "Bearer not-this-one")
    with status_server(401) as url:
        _refused(capsys, ["drive", "--corpus", "synthetic", "--config", str(config), "--out", str(out),
                          "--yes-edit-this-server", "--url", url, "--header-env", "Authorization=KBSIM_DRIVE_TOKEN"],
                 "answered HTTP 401", out)
    with silent_server() as url:
        _refused(capsys, ["drive", "--corpus", "synthetic", "--config", str(config), "--out", str(out),
                          "--yes-edit-this-server", "--url", url, "--timeout", "2"], "no answer within", out)


def test_a_corpus_the_server_does_not_hold_is_refused(tmp_path, config, capsys):
    out = tmp_path / "day"
    with http_server(tmp_path / "serve.log", *_serve_args(config)) as url:
        _refused(capsys, ["drive", "--corpus", "kbsim:sample", "--out", str(out), "--yes-edit-this-server",
                          "--url", url], "the server does not hold this corpus", out)
        # the synthetic corpus of another seed: same ids, other titles
        _refused(capsys, ["drive", "--corpus", "synthetic", "--config", str(config), "--seed", "99",
                          "--out", str(out), "--yes-edit-this-server", "--url", url],
                 "the server does not hold this corpus", out)


def test_a_server_lacking_a_tool_or_with_another_schema_is_refused(tmp_path, config, capsys, monkeypatch):
    from kbsim.drive import remote

    out = tmp_path / "day"
    with http_server(tmp_path / "serve.log", *_serve_args(config)) as url:
        argv = ["drive", "--corpus", "synthetic", "--config", str(config), "--seed", str(SEED), "--out", str(out),
                "--yes-edit-this-server", "--url", url]
        # as if the server's edit tool took no expected_version: the driver sends one it lacks
        monkeypatch.setitem(remote.SENT_ARGUMENTS, remote.EDIT, (*remote.SENT_ARGUMENTS[remote.EDIT], "if_match"))
        _refused(capsys, argv, "edit_knowledge_article has no argument if_match", out)
        monkeypatch.setitem(remote.SENT_ARGUMENTS, remote.EDIT, ("knowledge_base_id", "article_id", "content"))
        _refused(capsys, argv, "requires expected_version, idempotency_key, which the driver does not send", out)
        monkeypatch.setattr(remote, "TOOLS", (*remote.TOOLS, "subscribe_knowledge_base"))
        _refused(capsys, argv, "the server does not list subscribe_knowledge_base", out)


def test_a_field_map_naming_fields_the_server_lacks_is_refused_at_the_probe(tmp_path, config, capsys):
    out = tmp_path / "day"
    (tmp_path / "map.yaml").write_text("citation_version: version\n")
    (tmp_path / "bad.yaml").write_text("citation_versoin: version\n")
    with http_server(tmp_path / "serve.log", *_serve_args(config)) as url:
        argv = ["drive", "--corpus", "synthetic", "--config", str(config), "--seed", str(SEED), "--out", str(out),
                "--yes-edit-this-server", "--url", url, "--field-map"]
        _refused(capsys, [*argv, str(tmp_path / "map.yaml")], "has no field 'version' (field map citation_version)",
                 out)
        _refused(capsys, [*argv, str(tmp_path / "bad.yaml")], "citation_versoin", out)


class _Drive:
    """``kbsim drive`` over stdio in its own process, its stderr collected by a thread."""

    def __init__(self, config: Path, out: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kbsim", "drive", "--corpus", "synthetic", "--seed", str(SEED), "--config",
             str(config), "--out", str(out), "--yes-edit-this-server", *extra, "--",
             *serve_command(*_serve_args(config))],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.err: list[str] = []
        self.reader = threading.Thread(target=lambda: self.err.extend(self.process.stderr), daemon=True)
        self.reader.start()

    def wait_for_the_day(self) -> None:
        deadline = time.monotonic() + 120
        while not any("the day starts" in line for line in self.err):
            assert time.monotonic() < deadline and self.process.poll() is None, self.err
            time.sleep(0.1)

    def finish(self) -> tuple[int, str]:
        try:
            code = self.process.wait(timeout=120)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        self.reader.join(timeout=10)
        return code, "".join(self.err)


def test_a_server_that_stops_answering_mid_day_keeps_a_partial_history(tmp_path, config):
    """The stdio server is stopped (SIGSTOP) mid-day: the call times out, the day stops,
    the history so far is written and marked partial, exit 2."""
    out = tmp_path / "day"
    drive = _Drive(config, out, "--speed", "120", "--timeout", "2")
    drive.wait_for_the_day()
    time.sleep(3)
    server = [int(p) for p in subprocess.run(["pgrep", "-P", str(drive.process.pid)], capture_output=True,
                                              text=True).stdout.split()]
    assert server
    for pid in server:
        os.kill(pid, signal.SIGSTOP)
    try:
        code, err = drive.finish()
    finally:
        for pid in server:  # the SDK's shutdown may have killed it already
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert code == 2, err
    assert "stopped (server_timeout): " in err and "no answer within 2 s" in err
    history = read_history(out)
    assert not history.complete and history.meta["stopped_because"] == "server_timeout"
    assert (history.calls["error_code"] == "transport:timeout").sum() == 1


def test_ctrl_c_stops_the_day_and_keeps_the_partial_history(tmp_path, config):
    out = tmp_path / "day"
    drive = _Drive(config, out, "--speed", "60")
    drive.wait_for_the_day()
    time.sleep(3)
    drive.process.send_signal(signal.SIGINT)
    code, err = drive.finish()
    assert code == 130, err
    assert "stopped (interrupted)" in err and "never counted as a day" in err
    history = read_history(out)
    assert not history.complete and history.meta["stopped_because"] == "interrupted"
    assert len(history.calls) > 25 and history.calls["sim_s"].max() < 3600
    with pytest.raises(DriveError, match="no complete driven day"):
        against_model([out])


def test_a_speed_the_server_cannot_keep_up_with_is_refused_with_the_measured_lag(tmp_path, config, capsys):
    out = tmp_path / "day"
    assert _drive(config, out, "--", *serve_command(*_serve_args(config)),
                  extra=("--speed", "100000", "--max-lag", "0.001", "--max-late", "3")) == 2
    err = capsys.readouterr().err
    assert "stopped (too_late): --speed 100000: 4 events started more than 0.001 s late (worst " in err
    assert "the server cannot keep up; lower --speed" in err
    history = read_history(out)
    assert history.meta["stopped_because"] == "too_late" and (history.tables["lateness"]["lag_s"] > 0.001).sum() == 4


def test_a_server_is_a_store_backend_a_day_is_handed(config):
    """run_day(params, seed, store=RemoteBackend(address)): the day on its own (unpaced) clock
    against kbsim serve over stdio gives the in-memory day's tables; a server that does not
    hold the day's corpus is refused when the day fills its store."""
    from kbsim.cli.day_config import load_day
    from kbsim.drive import RemoteBackend, ServerAddress
    from kbsim.sim.day import run_day

    params = load_day(str(config))
    with RemoteBackend(ServerAddress.stdio(serve_command(*_serve_args(config, "--admin-tools")))) as backend:
        driven = run_day(params, SEED, store=backend)
        assert len(backend.recorder) > 100
    _same_tables(driven, run_day(params, SEED))
    with RemoteBackend(ServerAddress.stdio(serve_command(*_serve_args(config)))) as backend:
        with pytest.raises(DriveError, match="does not hold this corpus"):
            run_day(params, SEED + 1, store=backend)


@pytest.mark.parametrize(("option", "message"), [
    (["--timeout", "0"], "--timeout 0: expected seconds > 0"),
    (["--speed", "-1"], "--speed -1: expected simulated seconds per wall second"),
    (["--max-calls-per-second", "0"], "--max-calls-per-second 0: expected a number > 0"),
    (["--max-lag", "0"], "--max-lag 0: expected seconds > 0"),
    (["--header-env", "Authorization"], "expected HEADER=ENV_VARIABLE"),
    (["--url", "127.0.0.1:9"], "expected an http:// or https:// URL"),
])
def test_a_bad_option_is_one_line_before_anything_runs(tmp_path, capsys, option, message):
    argv = ["drive", "--corpus", "synthetic", "--out", str(tmp_path / "day"), "--yes-edit-this-server", *option]
    if "--url" not in option:
        argv += ["--url", "http://127.0.0.1:9/mcp"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "day").exists()


def test_an_experiment_config_names_a_server_as_its_store(config, tmp_path):
    """store: {backend: server, server: {command: [...]}}: the runner hands each day a fresh
    kbsim serve over stdio (its seed and day filled in), and the days' tables are the in-memory
    days' (but for versions and poll bytes, as a driven day's)."""
    from kbsim.cli.day_config import load_day
    from kbsim.runner.results import load_results
    from kbsim.runner.run import run_experiment
    from kbsim.sim.day import run_day

    params = load_day(str(config)).model_dump(mode="json", exclude_defaults=True)
    command = serve_command("--corpus", "synthetic", "--seed", "{seed}", "--config", "{day_config}", "--admin-tools")
    served = {**params, "store": {"backend": "server", "server": {"command": command}}}
    result = run_experiment({"name": "served", "params": served, "seeds": [SEED, SEED + 1]}, tmp_path,
                            workers=1, progress=False)
    assert (result.runs_total, len(result.failures)) == (2, 0)
    tables = load_results(result.directory)
    for seed in (SEED, SEED + 1):
        day = {name: tables[name][tables[name]["seed"] == seed].drop(columns=["scenario", "run_id"],
                                                                     errors="ignore")
               for name in DAY_TABLES}
        _same_tables(day, run_day(load_day(str(config)), seed))


@pytest.mark.parametrize(("server", "message"), [
    ({"url": "http://127.0.0.1:9/mcp"}, "2 days would share the one server at this URL"),
    ({"url": "http://127.0.0.1:9/mcp", "command": ["kbsim", "serve"]}, "give exactly one of url"),
    ({"command": ["kbsim", "serve", "--seed", "{sed}"]}, None),
])
def test_a_server_store_that_cannot_work_is_named(tmp_path, server, message):
    """A URL two days would share, or an ambiguous address, is refused by the config loader,
    naming the key, before anything runs; a placeholder that is none fails the day, naming it."""
    from kbsim.errors import UsageError
    from kbsim.runner.run import run_experiment

    config = {"name": "bad", "params": {"day_hours": 1, "corpus": {"articles": 30},
                                        "store": {"backend": "server", "server": server}}, "seeds": [1, 2]}
    if message is not None:
        with pytest.raises(UsageError, match="store.server") as info:
            run_experiment(config, tmp_path, workers=1, progress=False)
        assert message in str(info.value)
        assert not any(tmp_path.iterdir())
        return
    from kbsim.drive.configured import server_address
    from kbsim.params import DayParams

    params = DayParams.model_validate(config["params"])
    with pytest.raises(DriveError, match=r"store.server.command: 'sed' is no placeholder"):
        server_address(params.store.server, 1, "day.yaml")
