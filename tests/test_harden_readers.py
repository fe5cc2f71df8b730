"""No input reader crashes, hangs or swallows data (issue 24, part 1).

Every reader (corpus folders and files, Markdown front matter, traces, YAML configs and
their ``extends``) bounds its work before it starts and refuses in one line naming the
file and the line or field; never quotes a file that is not what it should be; prints
user text with control characters escaped; validates a trace against what the day will
do with it. The examples of the issue first, then one property test per reader feeding
it generated hostile files (random bytes, deep nesting, long fields, odd line endings).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbsim.cli import main
from kbsim.errors import UsageError
from kbsim.inputs import InputError, load_corpus
from kbsim.inputs.safe_read import MAX_ARTICLE_FILE_BYTES
from kbsim.inputs.traces import ArticleIndex, read_questions_trace, read_saves_trace
from kbsim.params import DayParams
from kbsim.runner.config import ConfigError
from kbsim.runner.load import MAX_EXTENDS, load_config, load_day_params
from kbsim.sim.replay import check_inputs
from kbsim.store import DAY_START
from kbsim.store.rules import MAX_CONTENT_CHARS, MAX_TITLE_CHARS

#: A 600-byte YAML "billion laughs": ten levels of ten aliases, 10**10 values once expanded.
BOMB = "&a0 [" + ",".join(["x"] * 10) + "]"
for _level in range(1, 10):
    BOMB = f"&a{_level} [{BOMB}" + f",*a{_level - 1}" * 9 + "]"


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and len(text) < 2000, text
    return text


def quick(call, seconds: float = 5.0):
    """``call()``'s result or UsageError, asserting it came back within ``seconds``."""
    started = time.perf_counter()
    try:
        return call()
    except UsageError as error:
        one_line(error)
        return error
    finally:
        assert time.perf_counter() - started < seconds


# -- corpus folders and files ---------------------------------------------------------------------


def test_a_symlink_loop_or_a_fifo_in_a_corpus_folder_is_one_line(tmp_path, capsys):
    kb = tmp_path / "kb"
    write(kb / "a.md", "# Reset the VPN\nbody")
    os.symlink("loop", kb / "loop")  # a link to itself: ELOOP
    assert main(["corpus", "check", str(kb)]) == 2
    err = capsys.readouterr().err
    assert err == f"kbsim corpus check: {kb / 'loop'}: a loop of symbolic links\n"
    os.remove(kb / "loop")
    os.symlink(".", kb / "again")  # a folder linking to itself: listed forever before
    with pytest.raises(InputError, match="leads to the folder .* again") as info:
        load_corpus(kb)
    one_line(info.value)
    os.remove(kb / "again")
    os.mkfifo(kb / "pipe.md")
    with pytest.raises(InputError, match="pipe.md: is not a regular file"):
        load_corpus(kb)
    os.remove(kb / "pipe.md")
    os.symlink("/dev/zero", kb / "zero.md")
    with pytest.raises(InputError, match="zero.md: is not a regular file"):
        load_corpus(kb)
    os.remove(kb / "zero.md")
    assert len(load_corpus(kb)) == 1


def test_a_2_gb_markdown_file_is_refused_before_it_is_read(tmp_path):
    kb = tmp_path / "kb"
    write(kb / "a.md", "# Fine article\nbody")
    big = kb / "huge.md"
    with big.open("wb") as handle:  # sparse: 2 GB on paper, nothing on the disk
        handle.truncate(2 << 30)
    tracemalloc.start()
    try:
        error = quick(lambda: load_corpus(kb), seconds=5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(error, InputError) and peak < 16 << 20
    assert str(error) == (f"{big}: is 2,147,483,648 bytes, over the limit of {MAX_ARTICLE_FILE_BYTES:,} bytes (1 MiB) "
                          "for an article file")


def test_csv_with_cr_only_line_endings_reads_as_lines(tmp_path):
    corpus = write(tmp_path / "kb.csv", 'title,content\rReset it now,"Body one\rsecond line"\rSecond one,Body two\r')
    assert list(load_corpus(corpus).articles()) == [("Reset it now", "Body one\nsecond line"),
                                                    ("Second one", "Body two")]
    jsonl = write(tmp_path / "kb.jsonl",
                  '{"title": "Reset it now", "content": "a"}\r{"title": "Other", "content": "b"}\r')
    assert load_corpus(jsonl).titles == ("Reset it now", "Other")


@pytest.mark.parametrize(("quote", "line"), [('"Body one\nSecond one,Body two\n', 3),
                                            # a quote inside an unquoted value is text; the one after is not
                                            ('Body "one\nSecond,"Body two\n', 4)])
def test_an_unterminated_quote_is_refused_naming_its_line(tmp_path, quote, line):
    corpus = write(tmp_path / "kb.csv", f"title,content\nFirst one,fine\nReset it now,{quote}Third,x\n")
    with pytest.raises(InputError) as info:
        load_corpus(corpus)
    assert one_line(info.value).startswith(f"{corpus}, line {line}: a quoted value opened here is never closed")
    write(corpus, 'title,content\nFirst one,fine\nReset it now,Body "one wide\nThird,"x ""y"" z"\n')
    assert load_corpus(corpus).contents == ("fine", 'Body "one wide', 'x "y" z')


def test_a_csv_or_trace_field_over_the_csv_modules_limit_gets_kbsims_message(tmp_path):
    long = "x" * 140_000
    corpus = write(tmp_path / "kb.csv", f"title,content\nFirst one,fine\n,{long}\nLong one,{long}\n")
    with pytest.raises(InputError) as info:
        load_corpus(corpus)
    assert one_line(info.value).startswith(f"{corpus}, line 3, column 'title': no title")
    write(corpus, f"title,content\nFirst one,fine\nLong one,{long}\n")
    with pytest.raises(InputError, match=r"line 3, column 'content': content of 140,000 characters is over the limit"):
        load_corpus(corpus)
    saves = write(tmp_path / "saves.csv", f"time,article,kind,content\n10,art-000001,content,{long}\n")
    with pytest.raises(InputError, match=r"saves.csv, line 2, column 'content': content of 140,000 characters"):
        read_saves_trace(saves, _index(), 3600.0, DAY_START)


def test_json_and_yaml_nested_thousands_deep_are_one_line(tmp_path):
    deep = "[" * 5000 + "]" * 5000
    jsonl = write(tmp_path / "kb.jsonl", json.dumps({"title": "Fine", "content": "x"}) + "\n"
                  + '{"title": "Deep", "content": ' + deep + "}\n")
    with pytest.raises(InputError) as info:
        load_corpus(jsonl)
    assert one_line(info.value) == f"{jsonl}, line 2: not a JSON object: nested too deeply to read"
    config = write(tmp_path / "deep.yaml", f"name: deep\nparams: {deep}\n")
    with pytest.raises(ConfigError, match="line 2, column .*: nested deeper than 64 levels") as info:
        load_config(config)
    one_line(info.value)
    front = write(tmp_path / "kb" / "a.md", f"---\ntitle: {deep}\n---\nbody\n")
    with pytest.raises(InputError, match="a.md, line 2: front matter is refused: nested deeper than 64 levels"):
        load_corpus(front.parent)


@pytest.mark.parametrize("where", ["description: {bomb}", "params: {{zipf_s: {bomb}}}",
                                   "sweep: {{zipf_s: {bomb}}}", "params: {{corpus: {{source: {bomb}}}}}"])
def test_a_yaml_alias_bomb_in_a_config_is_refused_fast(tmp_path, where):
    config = write(tmp_path / "bomb.yaml", "name: bomb\nseeds: 1\n" + where.format(bomb=BOMB) + "\n")
    assert config.stat().st_size < 700
    error = quick(lambda: load_config(config), seconds=3)
    assert isinstance(error, ConfigError) and "alias bomb" in str(error)
    assert quick(lambda: load_day_params(write(tmp_path / "day.yaml", f"zipf_s: {BOMB}\n")), seconds=3)


def test_a_yaml_alias_bomb_in_front_matter_is_refused_fast(tmp_path):
    kb = tmp_path / "kb"
    write(kb / "a.md", f"---\ntitle: {BOMB}\n---\nbody\n")
    error = quick(lambda: load_corpus(kb), seconds=3)
    assert isinstance(error, InputError) and str(error).startswith(f"{kb / 'a.md'}, line 2: front matter is refused")
    write(kb / "a.md", "---\ndefaults: &d {popularity: 3}\nother: *d\n---\n# Aliases are fine\nbody\n")
    assert load_corpus(kb).titles == ("Aliases are fine",)


def test_extends_naming_a_fifo_or_dev_zero_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "pipe.yaml")
    for target, kind in ((tmp_path / "pipe.yaml", "a FIFO (named pipe)"), (Path("/dev/zero"), "a character device")):
        config = write(tmp_path / "x.yaml", f"name: x\nextends: {target}\n")
        error = quick(lambda config=config: load_config(config), seconds=3)
        assert isinstance(error, ConfigError)
        assert str(error) == f"{target}: is {kind}; expected a regular config file"


def test_a_chain_of_1200_extends_is_one_line(tmp_path):
    for i in range(1200):
        write(tmp_path / f"c{i}.yaml", f"extends: c{i + 1}.yaml\n" if i < 1199 else "name: end\nseeds: 1\n")
    error = quick(lambda: load_config(tmp_path / "c0.yaml"), seconds=5)
    assert isinstance(error, ConfigError) and error.key_path == "extends"
    assert f"a chain of more than {MAX_EXTENDS} files" in str(error)


def test_extends_naming_a_file_that_is_no_config_never_quotes_it(tmp_path, capsys):
    secret = "ghp_0123456789abcdefSECRET"
    write(tmp_path / "token.txt", secret + "\n")
    write(tmp_path / "creds.yaml", f"{secret}: {secret}\n")
    write(tmp_path / "passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/usr/sbin/nologin\n")
    for name in ("token.txt", "creds.yaml", "passwd"):
        config = write(tmp_path / "x.yaml", f"name: x\nextends: {name}\n")
        assert main(["run", str(config), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"kbsim run: error: {tmp_path / name}: ") and err.count("\n") == 1
        assert secret not in err and "root:" not in err and "bash" not in err
        with pytest.raises(ConfigError) as info:  # kbsim serve --config names it directly
            load_day_params(tmp_path / name)
        assert secret not in str(info.value) and "root:" not in str(info.value)
    corpus = write(tmp_path / "kb.csv", f"{secret},{secret}\n1,2\n")
    with pytest.raises(InputError) as info:
        load_corpus(corpus)
    assert secret not in str(info.value)
    assert "'titel'" in str(quick(lambda: load_corpus(write(tmp_path / "typo.csv", "titel,content\na,b\n"))))


def test_corpus_check_prints_titles_ids_and_errors_with_control_characters_escaped(tmp_path, capsys):
    kb = write(tmp_path / "kb.jsonl", json.dumps({"id": "kb/reset", "title": "Reset \x1b[2J the VPN",
                                                   "content": "x"}) + "\n")
    assert main(["corpus", "check", str(kb)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "Reset \\x1b[2J the VPN" in out
    # an id the tools cannot carry back is refused (your ids, kept: issue 25), and the refusal
    # quotes it escaped
    bad_id = write(tmp_path / "ids.jsonl", json.dumps({"id": "KB\x1b]0;owned\x07", "title": "Reset the VPN",
                                                       "content": "x"}) + "\n")
    assert main(["corpus", "check", str(bad_id)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and str(bad_id) in err and err.count("\n") == 1
    named = write(tmp_path / "kb\x1b[2J\u202e.csv", "title,content\nx,y\n")  # an error quoting the path
    assert main(["corpus", "check", str(named)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err and "kb\\x1b[2J\\u202e.csv" in err


def test_titles_are_held_to_the_search_tools_limits(tmp_path):
    kb = write(tmp_path / "kb.jsonl", json.dumps({"title": "t" * 5_000_000, "content": "x"}) + "\n")
    with pytest.raises(InputError) as info:
        load_corpus(kb)
    assert one_line(info.value) == (f"{kb}, line 1, field 'title': title of 5,000,000 characters is over the limit of "
                                    f"{MAX_TITLE_CHARS} (the title check searches for it, and a search query holds at "
                                    f"most {MAX_TITLE_CHARS})")
    write(kb, json.dumps({"title": "t" * MAX_TITLE_CHARS, "content": "x" * MAX_CONTENT_CHARS}) + "\n")
    assert len(load_corpus(kb)) == 1


def _index() -> ArticleIndex:
    return ArticleIndex(["art-000001", "art-000002", "art-000003"],
                        ["Reset the VPN", "Printer offline", "Email on a phone"])


def test_a_retitle_the_day_cannot_search_for_is_refused_at_validation(tmp_path):
    saves = write(tmp_path / "saves.csv", "time,article,kind,title\n10,art-000001,content_and_title,x\n"
                  "20,x,content\n")
    with pytest.raises(InputError) as info:
        read_saves_trace(saves, _index(), 3600.0, DAY_START)
    assert one_line(info.value).startswith(f"{saves}, line 2, column 'title': title 'x' is shorter than 2 characters")
    write(saves, f"time,article,kind,title\n10,art-000001,content_and_title,{'t' * 201}\n")
    with pytest.raises(InputError, match="column 'title': title of 201 characters is over the limit of 200"):
        read_saves_trace(saves, _index(), 3600.0, DAY_START)
    # ... and so before anything runs, from a config naming the traces
    write(saves, "time,article,kind,title\n10,art-000001,content_and_title,x\n")
    questions = write(tmp_path / "questions.csv", "time,article\n20,art-000001\n")
    params = DayParams.model_validate({"day_hours": 1, "corpus": {"articles": 10},
                                       "saves": {"trace": str(saves)}, "questions": {"trace": str(questions)}})
    with pytest.raises(InputError, match="title 'x' is shorter than 2 characters"):
        check_inputs(params, [1])


# -- one property test per reader -----------------------------------------------------------------

FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])
DEEP = st.integers(50, 3000).map(lambda depth: "[" * depth + "]" * depth)
CELL = st.one_of(st.text(max_size=30), st.sampled_from(['"', '""', '"x', 'a,"b', "\x00", "\ufeff", "\x1b[2J"]),
                 DEEP, st.integers(100_000, 150_000).map(lambda n: "y" * n))


def _bounded(read, path: Path):
    """``read(path)``: a result or a one-line UsageError, within 5 s and 500 MB more memory
    (the process's peak resident size: tracemalloc would slow the readers twentyfold)."""
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    started = time.perf_counter()
    try:
        return read(path)
    except UsageError as error:
        one_line(error)
        return error
    finally:
        assert time.perf_counter() - started < 5
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before < 500 << 10


def _fresh(name: str, data: bytes) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="kbsim-hostile-"))
    return write(folder / name, data)


def _rows(header: list[str], rows: list[list[str]], ending: str, cut: int | None) -> bytes:
    def cell(value: str) -> str:
        return value if not any(c in value for c in ',"\r\n') or value.startswith('"') else (
            '"' + value.replace('"', '""') + '"')

    text = ending.join(",".join(cell(v) for v in row) for row in [header, *rows]) + ending
    data = text.encode("utf-8", "surrogatepass")
    return data if cut is None else data[:cut]


HOSTILE_CSV = st.one_of(
    st.binary(max_size=3000),
    st.builds(_rows, st.just(["title", "content", "id", "popularity"]),
              st.lists(st.lists(CELL, min_size=1, max_size=5), max_size=6), ENDINGS,
              st.none() | st.integers(0, 4000)),
)
HOSTILE_TRACE = st.one_of(
    st.binary(max_size=3000),
    st.builds(_rows, st.sampled_from([["time", "article", "kind", "title", "content", "length"],
                                      ["time", "article", "query"]]),
              st.lists(st.lists(st.one_of(CELL, st.sampled_from(["10", "art-000001", "content",
                                                                   "content_and_title", "unpublish", "1e309"])),
                                min_size=1, max_size=6), max_size=6), ENDINGS, st.none() | st.integers(0, 4000)),
)
HOSTILE_JSONL = st.one_of(
    st.binary(max_size=3000),
    st.lists(st.one_of(
        st.builds(lambda t, c: json.dumps({"title": t, "content": c}), CELL, CELL),
        DEEP.map(lambda deep: '{"title": "x", "content": ' + deep + "}"),
        st.text(max_size=50)), max_size=5).flatmap(lambda lines: ENDINGS.map(lambda e: e.join(lines).encode(
            "utf-8", "surrogatepass"))),
)
HOSTILE_YAML = st.one_of(
    st.binary(max_size=2000),
    st.text(alphabet="{}[]:&*-!|>'\"#%@`,? \n\tabcxyz019.", max_size=300).map(lambda t: t.encode()),
    DEEP.map(lambda deep: f"name: x\nparams: {deep}\n".encode()),
    st.sampled_from(["description", "params", "sweep", "extends", "seeds"]).map(
        lambda key: f"name: x\n{key}: {BOMB}\n".encode()),
    st.builds(lambda key, value, ending: f"name: x{ending}{key}: {value}{ending}".encode("utf-8", "surrogatepass"),
              st.sampled_from(["params", "seeds", "sweep", "scenarios", "contrasts", "nmae"]), CELL, ENDINGS),
)


@pytest.mark.slow
@FAST
@given(HOSTILE_CSV)
def test_any_csv_corpus_gives_articles_or_one_line(data):
    _bounded(load_corpus, _fresh("kb.csv", data))


@pytest.mark.slow
@FAST
@given(HOSTILE_JSONL)
def test_any_jsonl_corpus_gives_articles_or_one_line(data):
    _bounded(load_corpus, _fresh("kb.jsonl", data))


@pytest.mark.slow
@FAST
@given(st.lists(st.one_of(
    st.binary(max_size=2000),
    st.builds(lambda front, body, ending: ending.join(["---", front, "---", body]).encode("utf-8", "surrogatepass"),
              st.one_of(st.just(f"title: {BOMB}"), DEEP.map(lambda d: f"title: {d}"), st.text(max_size=80)),
              CELL, ENDINGS)), min_size=1, max_size=3))
def test_any_folder_of_markdown_gives_articles_or_one_line(files):
    folder = Path(tempfile.mkdtemp(prefix="kbsim-hostile-"))
    for i, data in enumerate(files):
        write(folder / f"a{i}.md", data)
    _bounded(load_corpus, folder)


@pytest.mark.slow
@FAST
@given(HOSTILE_TRACE)
def test_any_trace_gives_rows_or_one_line(data):
    index = _index()
    start = datetime.fromisoformat("2026-01-05T09:00:00+00:00")
    path = _fresh("trace.csv", data)
    _bounded(lambda p: read_saves_trace(p, index, 3600.0, start), path)
    _bounded(lambda p: read_questions_trace(p, index, 3600.0, start), path)


@pytest.mark.slow
@FAST
@given(HOSTILE_YAML)
def test_any_yaml_config_gives_a_config_or_one_line(data):
    path = _fresh("config.yaml", data)
    _bounded(load_config, path)
    _bounded(load_day_params, path)


def teardown_module(module):  # the hostile files of the property tests
    for folder in Path(tempfile.gettempdir()).glob("kbsim-hostile-*"):
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))


def _shared_title_corpus(tmp_path: Path, sharing: int) -> Path:
    """``sharing`` articles titled alike (in case and punctuation only: the same search terms)
    among ten others with their own titles."""
    rows = [{"id": f"vpn-{n}", "title": ("Reset the VPN", "reset the vpn!", "RESET THE VPN")[n % 3],
             "content": f"Step {n}: sign in again with the new password."} for n in range(sharing)]
    rows += [{"id": f"other-{n}", "title": f"Printer number {n} is offline", "content": "Restart it."}
             for n in range(10)]
    return write(tmp_path / "kb.jsonl", "".join(json.dumps(row) + "\n" for row in rows))


def _flagged_on_a_day_without_saves(kb: Path, **checks) -> int:
    from kbsim.sim import run_day

    params = DayParams.model_validate({"day_hours": 2, "corpus": {"source": str(kb)}, "checks": checks,
                                       "saves": {"count": 0}, "questions": {"count": 40}})
    tables = run_day(params, 1)
    title = tables["checks"][tables["checks"]["strategy"] == "title"]
    assert len(tables["citations"]) > 0 and title["citations_held"].sum() > 0  # the check had citations to check
    assert title["true_stale"].sum() == 0  # nothing changed
    return int(title["flagged"].sum())


def test_articles_sharing_a_title_are_told_apart_by_id(tmp_path):
    """Three articles share a title: on a day where nothing changes, the title check flags
    none of their citations (it finds each among the hits by its id)."""
    assert _flagged_on_a_day_without_saves(_shared_title_corpus(tmp_path, 3)) == 0


def test_more_articles_sharing_a_title_than_the_title_check_finds_are_refused(tmp_path, capsys):
    """15 articles share a title and the title check asks for 10 hits: some could never be found
    by title, and a day with no saves would call their citations gone. The day is refused,
    before it runs, naming the corpus and the title; with 20 hits it runs and flags nothing."""
    kb = _shared_title_corpus(tmp_path, 15)
    expected = (f"{kb}, field 'title': 15 articles share the title 'Reset the VPN' (or one with its search terms), "
                "more than the 10 hits the title check asks for (checks.title_search_limit): it could never find 5 "
                "of them by title and would report their citations gone although nothing changed. Give them "
                "distinct titles, or set checks.title_search_limit to 15")
    with pytest.raises(InputError) as info:
        _flagged_on_a_day_without_saves(kb)
    assert one_line(info.value) == expected
    config = write(tmp_path / "day.yaml", f"params: {{corpus: {{source: {kb}}}, day_hours: 1}}\nseeds: 1\n")
    with pytest.raises(InputError) as info:
        load_config(config).runs()
    assert one_line(info.value) == expected
    out = tmp_path / "results"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 2
    assert expected in capsys.readouterr().err and not out.exists()
    assert main(["corpus", "check", str(kb)]) == 0
    assert "warning: a day on it is refused: 15 articles share the title 'Reset the VPN'" in capsys.readouterr().out
    assert _flagged_on_a_day_without_saves(kb, title_search_limit=20) == 0


def test_titles_without_search_terms_are_not_one_shared_title(tmp_path):
    """Titles the analyzer gives no term (Hindi under the ascii analyzer) are no query at all:
    they are not counted as one title shared by all of them (corpus check warns of them)."""
    from kbsim.inputs.resolve import largest_title_group
    from kbsim.store.analyzer import ASCII

    rows = [{"title": f"पासवर्ड रीसेट {'क' * (n + 1)}", "content": "x"} for n in range(15)]
    rows.append({"title": "Printer offline", "content": "Restart it."})
    kb = write(tmp_path / "kb.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    assert largest_title_group(load_corpus(kb), ASCII) == ("Printer offline", 1)
    config = write(tmp_path / "day.yaml", f"params: {{corpus: {{source: {kb}}}, day_hours: 1}}\nseeds: 1\n")
    assert len(load_config(config).runs()) == 1
