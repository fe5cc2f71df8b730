"""Issue 24, audited again: new cases of each class, on surfaces the issue did not name.

The first round's tests (``test_harden_*.py``) hold the issue's own examples. These are
the cases a second, hostile pass found failing: ``kbsim fit``'s log readers (CSV and JSON
read without kbsim's bounds), the results folder read back (``manifest.json``,
``run.json``, the Parquet tables, ``summary.csv``: a FIFO, ``/dev/zero``, a sparse file,
JSON nested thousands deep), ``kbsim trace export`` on a damaged run, YAML holding a
control character, a path that "does not exist" because it is a link loop, the server
over HTTP and ids stdio let through, and files ``kbsim fit`` wrote in place. Each test
failed before its fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

import kbsim.files
from kbsim.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SAVES = Path(__file__).resolve().parents[1] / "examples" / "helpdesk-log" / "saves.csv"


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def one_error_line(capsys, prefix: str) -> str:
    """The one line a refused command printed on stderr (no traceback)."""
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix) and "Traceback" not in err, err
    return lines[0]


# -- kbsim fit's logs: the readers kbsim's corpus and traces use ---------------------------------


def test_fit_refuses_an_unterminated_quote_instead_of_swallowing_the_log(tmp_path, capsys):
    """Three saves, the first with a quote never closed: read as one save before."""
    log = write(tmp_path / "saves.csv", 'time,article\n2026-01-05T09:00:00Z,"a\n'
                "2026-01-05T10:00:00Z,b\n2026-01-05T11:00:00Z,c\n")
    assert main(["fit", str(log), "--articles", "400"]) == 2
    line = one_error_line(capsys, "kbsim fit: error: ")
    assert line == (f"kbsim fit: error: {log}, line 2: a quoted value opened here is never closed: a missing \" "
                    "swallows the rest of the file")


def test_fit_reads_a_value_over_the_csv_modules_limit(tmp_path, capsys):
    """A 200,000-character article name raised ``_csv.Error: field larger than field limit``."""
    log = write(tmp_path / "saves.csv", "time,article\n2026-01-05T09:00:00Z," + "a" * 200_000 + "\n")
    assert main(["fit", str(log), "--articles", "400", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["log"]["saves_total"] == 1


@pytest.mark.parametrize("name, text", [
    ("deep.jsonl", "[" * 100_000 + "]" * 100_000 + "\n"),
    ("deep.json", "[" * 100_000 + "]" * 100_000),
    ("deepobj.json", '{"a":' * 100_000 + "1" + "}" * 100_000),
])
def test_fit_and_advise_refuse_json_nested_too_deep_in_one_line(tmp_path, capsys, name, text):
    log = write(tmp_path / name, text)
    assert main(["fit", str(log), "--articles", "400"]) == 2
    assert one_error_line(capsys, "kbsim fit: error: ").endswith("not JSON (nested too deeply to read)")
    assert main(["advise", "--trace", str(log), "--articles", "400", "--max-latency", "15min"]) == 2
    assert one_error_line(capsys, "kbsim advise: error: ").endswith("not JSON (nested too deeply to read)")


def test_fit_names_what_a_sqlite_log_is_when_it_is_not_a_file(tmp_path, capsys):
    """A FIFO, a device or a link loop named ``.db`` was reported as 'no such file'."""
    os.mkfifo(tmp_path / "fifo.db")
    (tmp_path / "zero.db").symlink_to("/dev/zero")
    (tmp_path / "a.db").symlink_to(tmp_path / "b.db")
    (tmp_path / "b.db").symlink_to(tmp_path / "a.db")
    expected = {"fifo.db": "is a FIFO (named pipe); expected a regular SQLite file",
                "zero.db": "is a character device; expected a regular SQLite file",
                "a.db": "a loop of symbolic links; expected a file",
                "none.db": "no such file"}
    for name, problem in expected.items():
        started = time.monotonic()
        assert main(["fit", str(tmp_path / name), "--articles", "4"]) == 2
        assert time.monotonic() - started < 10
        assert one_error_line(capsys, "kbsim fit: error: ") == f"kbsim fit: error: {tmp_path / name}: {problem}"


def test_a_corpus_that_is_a_link_loop_or_a_dangling_link_says_so(tmp_path, capsys):
    (tmp_path / "a.csv").symlink_to(tmp_path / "b.csv")
    (tmp_path / "b.csv").symlink_to(tmp_path / "a.csv")
    (tmp_path / "gone.csv").symlink_to(tmp_path / "nothing-here.csv")
    for name, problem in (("a.csv", "a loop of symbolic links; expected a file"),
                          ("gone.csv", "a symbolic link to nothing (its target does not exist)"),
                          ("none.csv", "no such file or folder")):
        assert main(["corpus", "check", str(tmp_path / name)]) == 2
        assert one_error_line(capsys, "kbsim corpus check: ") == f"kbsim corpus check: {tmp_path / name}: {problem}"


# -- YAML with a character YAML does not allow ---------------------------------------------------


def test_yaml_holding_a_control_character_names_it_and_where(tmp_path, capsys):
    """PyYAML's ReaderError has no ``problem``: the message read 'invalid YAML at cannot be parsed'."""
    config = write(tmp_path / "nul.yaml", "description: x\x00y\nseeds: 1\n")
    assert main(["run", str(config), "--out", str(tmp_path / "results")]) == 2
    assert one_error_line(capsys, "kbsim run: error: ") == (
        f"kbsim run: error: {config}: invalid YAML at line 1, column 15: it holds the character U+0000, which YAML "
        "does not allow (a control character)")
    article = write(tmp_path / "kb" / "a.md", "---\ntitle: Reset a password\nid: x\x1b\n---\nbody text\n")
    assert main(["corpus", "check", str(tmp_path / "kb")]) == 2
    assert one_error_line(capsys, "kbsim corpus check: ") == (
        f"kbsim corpus check: {article}, line 3: front matter is not YAML: it holds the character U+001B, which "
        "YAML does not allow (a control character)")


# -- the results folder read back ----------------------------------------------------------------


def _results(tmp_path: Path) -> tuple[Path, Path]:
    config = write(tmp_path / "tiny.yaml", "name: tiny\nparams: {day_hours: 1, corpus: {articles: 20}, "
                   "saves: {count: 10}, questions: {count: 5}}\nseeds: 1\n")
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "--no-progress", "--workers", "1",
                 "-q"]) == 0
    return config, next((tmp_path / "results" / "tiny" / "runs").iterdir())


def _replace(path: Path, how: str) -> None:
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "zero":
        path.symlink_to("/dev/zero")
    elif how == "deep":
        path.write_text("[" * 100_000)
    elif how == "sparse":
        with path.open("wb") as handle:
            handle.truncate(5 << 30)


@pytest.mark.parametrize("how", ["fifo", "zero", "deep", "sparse"])
@pytest.mark.parametrize("which", ["manifest.json", "summary.csv", "run.json", "metrics.parquet"])
def test_a_results_file_that_cannot_be_read_within_bounds_is_recomputed_not_fatal(tmp_path, capsys, which, how):
    """A FIFO hung the run, /dev/zero or a sparse file raised MemoryError, JSON nested
    thousands deep a RecursionError: each is now damage, noted, and the run recomputed."""
    config, run_dir = _results(tmp_path)
    target = (run_dir if which in ("run.json", "metrics.parquet") else run_dir.parents[1]) / which
    _replace(target, how)
    capsys.readouterr()
    started = time.monotonic()
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "--no-progress", "--workers", "1"]) == 0
    assert time.monotonic() - started < 60
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if which in ("run.json", "metrics.parquet"):
        assert "is damaged" in err and "recomputing it" in err
        assert "(0 reused, 1 computed, 0 failed)" in err
    assert json.loads((run_dir / "run.json").read_bytes())["run_id"] == run_dir.name


# -- kbsim trace export on a damaged run ---------------------------------------------------------


@pytest.mark.parametrize("damage", ["zero", "cut", "changed", "not parquet"])
def test_trace_export_of_a_damaged_run_is_one_line_before_any_simulation(tmp_path, capsys, damage):
    """The run's tables were read as they were: a pyarrow traceback for a cut file, a
    FileNotFoundError for a link to /dev/zero, and a changed file was trusted."""
    _, run_dir = _results(tmp_path)
    saves = run_dir / "saves.parquet"
    data = saves.read_bytes()
    if damage == "zero":
        _replace(saves, "zero")
    elif damage == "cut":
        saves.write_bytes(data[:100])
    elif damage == "changed":
        saves.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    else:  # bytes run.json agrees with, that are not a table
        junk = b"x" * 50
        saves.write_bytes(junk)
        marker = json.loads((run_dir / "run.json").read_bytes())
        marker["files"]["saves.parquet"] = {"bytes": 50, "sha256": hashlib.sha256(junk).hexdigest()}
        (run_dir / "run.json").write_text(json.dumps(marker))
    capsys.readouterr()
    assert main(["trace", "export", str(run_dir), "--out", str(tmp_path / "traces")]) == 2
    line = one_error_line(capsys, f"kbsim trace export: {run_dir}: the run is damaged (saves.parquet")
    assert line.endswith("; run it again")
    assert not (tmp_path / "traces").exists()


# -- the server: every request answered, over stdio and over HTTP --------------------------------


@pytest.mark.parametrize("request_id", ["NaN", "Infinity", "-Infinity"])
def test_an_id_of_nan_or_infinity_is_answered_not_taken_for_a_notification(request_id):
    """The SDK reads NaN as a number and the request as a notification: it got no reply."""
    from kbsim.serve.stdio import line_error

    error = line_error(f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/list"}}'.encode())
    assert error is not None and error.id is None and error.error.code == -32700
    assert error.error.message == f"Parse error: the line is not JSON: {request_id} is not JSON"


def test_over_http_every_request_is_answered_and_the_headers_are_checked_first(tmp_path):
    """Over HTTP an ``id`` of null, an object or NaN got 202 Accepted and never an answer
    (stdio answered them); a batch got a pydantic dump. Host, Origin and Content-Type are
    still checked before the body is read."""
    import httpx2
    from test_serve_http import INITIALIZE, MCP_HEADERS, http_server

    with http_server(tmp_path / "stderr.log") as url, httpx2.Client(timeout=20) as http:
        opened = http.post(url, json=INITIALIZE, headers=MCP_HEADERS)
        assert opened.status_code == 200
        session = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-06-18"}
        assert http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                         headers=session).status_code == 202

        def post(body: str, **headers) -> tuple[int, dict | str]:
            response = http.post(url, content=body.encode(), headers={**session, **headers})
            try:
                return response.status_code, response.json()
            except ValueError:
                return response.status_code, response.text

        for body, code in (('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600),
                           ('{"jsonrpc":"2.0","id":{},"method":"tools/list"}', -32600),
                           ('{"jsonrpc":"2.0","id":NaN,"method":"tools/list"}', -32700),
                           ('[{"jsonrpc":"2.0","id":5,"method":"tools/list"}]', -32600)):
            status, answer = post(body)
            assert status == 400 and answer["id"] is None and answer["error"]["code"] == code, (body, answer)
        assert post('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', Origin="http://evil.example") == (
            403, "Invalid Origin header")
        assert post('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', Host="evil.example") == (
            421, "Invalid Host header")
        status, answer = post('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":'
                              '"search_knowledge_base","arguments":{"knowledge_base_id":"kb-1","query":"password"}}}')
        assert status == 200 and '"id":7' in answer.replace(" ", "") and "art-" in answer


# -- files kbsim fit writes: whole or not at all -------------------------------------------------


def test_fit_writes_its_figure_and_popularity_by_rename_and_a_full_disk_changes_nothing(tmp_path, capsys,
                                                                                      monkeypatch):
    """``--figure`` was drawn by ``savefig`` into the file and ``-popularity.csv`` by
    ``to_csv`` into it: a full disk cut them short. Both now go through
    ``kbsim.files.atomic_write_bytes`` (a new file renamed over the old: a new inode)."""
    from test_harden_writes import _FillingDisk

    config, figure = tmp_path / "day.yaml", tmp_path / "fit.png"
    popularity = tmp_path / "day-popularity.csv"
    args = ["fit", str(SAVES), "--articles", "400", "--write-config", str(config), "--figure", str(figure), "-q"]
    assert main(args) == 0
    before = {path: (path.stat().st_ino, path.read_bytes()) for path in (config, figure, popularity)}
    assert main([*args, "--force"]) == 0
    for path, (inode, data) in before.items():
        assert path.stat().st_ino != inode and path.read_bytes() == data, path
    capsys.readouterr()
    before = {path: path.read_bytes() for path in (config, figure, popularity)}
    written = sum(path.stat().st_size for path in tmp_path.rglob("*") if path.is_file() and path != figure)
    for room, option in ((100, "--write-config"), (written + 100, "--figure")):
        with pytest.MonkeyPatch.context() as patch:
            _FillingDisk(patch, room=room)
            assert main([*args, "--force"]) == 2
        line = one_error_line(capsys, f"kbsim fit: error: {option}: ")
        assert line.endswith(": No space left on device")
        assert {path: path.read_bytes() for path in before} == before
        assert not [p.name for p in tmp_path.rglob("*.tmp")]


def test_the_example_log_is_written_atomically(tmp_path, monkeypatch):
    from kbsim.fit.synthetic import write_example_log

    written = write_example_log(tmp_path)
    inodes = {path: path.stat().st_ino for path in written}
    assert [path.stat().st_ino for path in write_example_log(tmp_path)] != list(inodes.values())
    calls = []
    real = kbsim.files.atomic_write_bytes
    monkeypatch.setattr(kbsim.files, "atomic_write_bytes", lambda path, data, **kw: calls.append(path) or real(
        path, data, **kw))
    write_example_log(tmp_path)
    assert calls == list(written)


# -- serve's options, checked before anything is read --------------------------------------------


@pytest.mark.parametrize("args, message", [
    (["--seed", "-1"], "--seed: expected a whole number from 0 to 2**63 - 1, got -1"),
    (["--seed", str(2**63)], f"--seed: expected a whole number from 0 to 2**63 - 1, got {2**63}"),
    (["--kb-id", "\x1b[31m"], "--kb-id: the knowledge base id '\\x1b[31m' holds the character U+001B, which a tool "
                              "result cannot carry as it is (control characters, line separators, lone surrogates)"),
    (["--kb-id", ""], "--kb-id: the knowledge base id is empty"),
    (["--grant", " kb-2"], "--grant: the knowledge base id ' kb-2' has spaces at its start or end"),
])
def test_serve_refuses_a_seed_numpy_cannot_take_and_ids_the_tools_cannot_carry(capsys, args, message):
    """``--seed -1`` was a numpy traceback after the corpus was read; ``--kb-id`` with an
    escape sequence reached the terminal through every log line; an empty one was refused
    only after the knowledge base was filled."""
    from kbsim.cli import build_parser
    from kbsim.cli.serve_cmd import run

    with pytest.raises(Exception) as info:
        run(build_parser().parse_args(["serve", *args]))
    assert type(info.value).__name__ == "ServeConfigError" and str(info.value) == message


def test_a_language_kbsim_does_not_know_is_one_line_naming_the_option(capsys):
    """The message was pydantic's dump ('1 validation error for DayParams\\ncorpus\\n  Value
    error, ...  For further information visit https://errors.pydantic.dev/...'), and serve
    blamed --corpus 'kbsim:sample', which was never given."""
    from kbsim.cli import build_parser
    from kbsim.cli.serve_cmd import run

    assert main(["corpus", "check", "kbsim:sample", "--language", "zz"]) == 2
    line = one_error_line(capsys, "kbsim corpus check: --language 'zz': corpus: language 'zz' is not one kbsim "
                          "knows; expected one of ")
    assert "pydantic" not in line
    with pytest.raises(Exception) as info:
        run(build_parser().parse_args(["serve", "--language", "zz"]))
    assert str(info.value).startswith("--language 'zz': corpus: language 'zz' is not one kbsim knows; expected ")
    assert "pydantic" not in str(info.value) and "\n" not in str(info.value)


def test_advise_json_of_a_synthetic_day_from_a_log_has_no_null(tmp_path, capsys):
    """The simulated part wrote null for every interval over one seed (``calls_per_hour_low``),
    and ``day.days`` was null for a fitted day that was not replayed."""
    log = write(tmp_path / "saves.csv", "time,article\n" + "".join(
        f"2026-01-05T{9 + i // 60:02d}:{i % 60:02d}:00Z,a{i % 7}\n" for i in range(120)))
    assert main(["advise", "--trace", str(log), "--articles", "400", "--max-latency", "15min", "--json",
                 "--out", str(tmp_path / "results"), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "null" not in out and "NaN" not in out and "Infinity" not in out
    assert "simulated" in json.loads(out)


def test_a_scenario_name_with_an_escape_sequence_is_refused_before_it_reaches_the_terminal(tmp_path, capsys):
    """``kbsim run`` printed the summary table's header with the name raw: ESC [31m recoloured the terminal."""
    config = write(tmp_path / "esc.yaml", 'seeds: 1\nscenarios: {"a\\x1b[31m": {}}\n'
                   "params: {corpus: {articles: 20}, saves: {count: 5}, questions: {count: 5}}\n")
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "-q"]) == 2
    assert one_error_line(capsys, "kbsim run: error: ") == (
        f"kbsim run: error: {config}: scenarios: scenario name 'a\\x1b[31m' holds a control character (or a line "
        "separator, a bidirectional control); expected a name a terminal shows as it is")
    assert not (tmp_path / "results").exists()


def test_a_sqlite_store_that_is_a_fifo_a_device_or_a_link_loop_is_named_so(tmp_path):
    """``serve --db`` on a FIFO or /dev/zero said 'SQLite database failed: disk I/O error ...
    (is the file damaged, read-only, or its disk full?)'."""
    from kbsim.store import SQLiteStore, StoreFileError

    os.mkfifo(tmp_path / "fifo.db")
    (tmp_path / "a.db").symlink_to(tmp_path / "b.db")
    (tmp_path / "b.db").symlink_to(tmp_path / "a.db")
    for path, message in ((tmp_path / "fifo.db", "is a FIFO (named pipe); expected a regular file"),
                          (Path("/dev/zero"), "is a character device; expected a regular file"),
                          (tmp_path / "a.db", ": a loop of symbolic links; expected a file")):
        with pytest.raises(StoreFileError) as info:
            SQLiteStore(path)
        assert str(info.value) == f"path {str(path)!r}{'' if message.startswith(':') else ' '}{message}"
    (tmp_path / "to-new.db").symlink_to(tmp_path / "new.db")  # a link to a file yet to be made: made
    SQLiteStore(tmp_path / "to-new.db").close()
    assert (tmp_path / "new.db").is_file()


# -- a third pass: configs that hold nothing, duplicate JSON keys, late or raw messages ----------


@pytest.mark.parametrize("name, text", [
    ("empty.yaml", ""), ("noext", ""), ("comments.yaml", "# only a comment\n\n# and another\n"),
    ("null.yaml", "null\n"), ("tilde.yml", "~\n"), ("braces.yaml", "{}\n"),
])
def test_a_config_holding_no_experiment_is_refused_not_run_as_the_reference(tmp_path, capsys, name, text):
    """An empty file, or one of only comments, ``null`` or ``{}``, ran the reference experiment."""
    config = write(tmp_path / name, text)
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "--no-progress"]) == 2
    line = one_error_line(capsys, "kbsim run: error: ")
    assert line.startswith(f"kbsim run: error: {config}: holds no experiment: the file is empty")
    assert not (tmp_path / "results").exists()


def test_an_empty_file_named_by_extends_is_refused_naming_both(tmp_path, capsys):
    write(tmp_path / "base.yaml", "")
    config = write(tmp_path / "child.yaml", "extends: base.yaml\nname: child\n")
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "--no-progress"]) == 2
    assert one_error_line(capsys, "kbsim run: error: ").startswith(
        f"kbsim run: error: {tmp_path / 'base.yaml'}: holds no experiment (extended by {config.resolve()})")


@pytest.mark.parametrize("text", ["[1, 2]\n", "5\n", "just text\n"])
def test_a_config_that_is_a_list_or_a_scalar_is_refused(tmp_path, capsys, text):
    config = write(tmp_path / "odd.yaml", text)
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "--no-progress"]) == 2
    assert "(is it an experiment config?)" in one_error_line(capsys, "kbsim run: error: ")


@pytest.mark.parametrize("row", [
    '{"title": "Reset a password", "title": "Other title", "content": "body text"}',
    '{"title": "Reset a password", "content": "body", "content": "other body"}',
    '{"title": "Reset a password", "ti\\u0074le": "Other title", "content": "body text"}',
])
def test_a_corpus_row_giving_a_key_twice_is_refused_naming_line_and_key(tmp_path, capsys, row):
    """JSON keeps the last of two ``title`` keys silently: the article was read retitled."""
    corpus = write(tmp_path / "kb.jsonl", '{"title": "Change an email", "content": "one two"}\n' + row + "\n")
    key = "content" if '"content": "other' in row else "title"
    assert main(["corpus", "check", str(corpus)]) == 2
    assert one_error_line(capsys, "kbsim corpus check: ") == (
        f"kbsim corpus check: {corpus}, line 2, field '{key}': the key is given twice in one object (JSON would "
        "keep the last value silently); expected each key once")


def test_a_corpus_row_naming_a_key_inside_its_text_is_read(tmp_path, capsys):
    """The second reading, key by key, refuses only keys given twice, not a text naming one."""
    corpus = write(tmp_path / "kb.jsonl", '{"title": "Quote \\"title\\" here", "content": "the \\"title\\" key"}\n'
                   '{"title": "Caf\\u00e9 menu", "content": "one two"}\n')
    assert main(["corpus", "check", str(corpus)]) == 0
    assert "2 articles" in capsys.readouterr().out


def test_advise_a_negative_duration_says_it_must_be_positive(capsys):
    """argparse read ``-5min`` as an option: 'expected one argument'."""
    assert main(["advise", "--max-latency", "-5min"]) == 2
    assert one_error_line(capsys, "kbsim advise: error: ") == (
        "kbsim advise: error: --max-latency: expected a positive duration, got '-5min'")


def test_a_duration_in_exponent_form_is_read_and_one_out_of_range_says_so():
    """``1e308s`` was 'unknown unit 'e''."""
    from kbsim.units import parse_duration

    assert parse_duration("1e3min") == 60_000.0
    assert parse_duration("2.5e-1h") == 900.0
    assert parse_duration("1e308s", unit_required=True) == 1e308
    for text in ("1e308d", "1e400s"):
        with pytest.raises(ValueError, match=rf"^'{text}' is out of range: a duration must be a finite number"):
            parse_duration(text)
    with pytest.raises(ValueError, match="unknown unit 'e'"):
        parse_duration("3e")


@pytest.mark.parametrize("fmt, problem", [
    ("markdown", "Not a directory"), ("jsonl", "{afile} is a file, not a folder"),
    ("csv", "{afile} is a file, not a folder"),
])
def test_corpus_sample_into_a_path_inside_a_file_is_the_shared_writer_line(tmp_path, capsys, fmt, problem):
    """A raw ``[Errno 20] Not a directory`` (or ``[Errno 17] File exists``) before."""
    afile = write(tmp_path / "afile", "x")
    target = afile / "sub"
    assert main(["corpus", "sample", "--format", fmt, str(target)]) == 2
    assert one_error_line(capsys, "kbsim corpus sample: ") == (
        f"kbsim corpus sample: {target}: cannot write: {problem.format(afile=afile)}")
    assert afile.read_text() == "x"


def test_a_long_experiment_name_is_refused_when_the_config_is_read(tmp_path, capsys):
    """A 300-character name failed late, at the results folder: 'File name too long'."""
    config = write(tmp_path / "long.yaml", "name: " + "a" * 300 + "\nparams: {day_hours: 1}\n")
    assert main(["run", str(config), "--out", str(tmp_path / "results"), "--no-progress"]) == 2
    assert one_error_line(capsys, "kbsim run: error: ") == (
        f"kbsim run: error: {config}: name: a name of 300 characters is over the limit of 100 (it names the "
        "results directory)")
    assert not (tmp_path / "results").exists()
    from kbsim.runner.load import load_config

    assert load_config(write(tmp_path / "ok.yaml", "name: " + "a" * 100 + "\n")).name == "a" * 100
