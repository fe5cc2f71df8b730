"""A corpus from files: the three formats read alike, and every bad input names its file,
line and field, and writes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kbsim.inputs import MAX_CONTENT_CHARS, InputError, load_corpus
from kbsim.params import DayParams
from kbsim.sim import run_day

REPO = Path(__file__).resolve().parents[1]

ARTICLES = [
    ("Reset your VPN password", "Open the VPN client.\nChoose Reset."),
    ("Printer shows offline", "Remove the printer and add it again."),
    ("Set up email on a phone", "Install the mail app."),
]


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_a_folder_of_markdown_and_text_files(tmp_path):
    """Title: front matter's title, else the first heading, else the file name; the rest is
    content. The id: front matter's, else the path in the folder without its extension."""
    kb = tmp_path / "kb"
    write(kb / "a-vpn.md", "\n# Reset your VPN password\n\nOpen the VPN client.\nChoose Reset.\n")
    write(kb / "b" / "printer.markdown", "Printer shows offline\n=====\nRemove the printer and add it again.")
    write(kb / "c.md", "---\ntitle: Set up email on a phone\npopularity: 3\nid: KB-3\n---\nInstall the mail app.\n")
    write(kb / "d_guest-wifi.txt", "Ask reception for a code.")
    write(kb / ".hidden.md", "# Not an article")
    write(kb / "notes.docx", b"\x00\x01")
    write(kb / "e.md", "---\npopularity: 1\n---\n# Heading wins\nbody")
    with pytest.raises(InputError, match=r"a-vpn.md, line 2, field 'popularity': no popularity, while other"):
        load_corpus(kb)
    (kb / "c.md").write_text("---\ntitle: Set up email on a phone\nid: KB-3\n---\nInstall the mail app.\n")
    (kb / "e.md").write_text("# Heading wins\nbody")
    write(kb / "f.md", "---\ntitle: Front matter wins\n---\n# A heading\nbody")
    corpus = load_corpus(kb)
    assert list(corpus.articles()) == [
        *ARTICLES[:2], ("Set up email on a phone", "Install the mail app."),
        ("d guest wifi", "Ask reception for a code."), ("Heading wins", "body"),
        ("Front matter wins", "# A heading\nbody")]
    assert corpus.ids == ("a-vpn", "b/printer", "KB-3", "d_guest-wifi", "e", "f")
    assert corpus.weights is None and len(corpus.digest) == 64


def test_jsonl_and_csv_read_alike_with_popularity(tmp_path):
    rows = [{"id": f"KB-{i}", "title": t, "content": c, "popularity": p, "author": "x"}
            for i, ((t, c), p) in enumerate(zip(ARTICLES, [5, 0, 120.5], strict=True))]
    jsonl = write(tmp_path / "kb.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    csv_text = "author,id,title,content,popularity\n" + "".join(
        f'x,KB-{i},{t},"{c}",{p}\n' for i, ((t, c), p) in enumerate(zip(ARTICLES, ["5", "0", "120.5"], strict=True)))
    csv = write(tmp_path / "kb.csv", csv_text)
    for path in (jsonl, csv):
        corpus = load_corpus(path)
        assert list(corpus.articles()) == ARTICLES, path
        assert corpus.ids == ("KB-0", "KB-1", "KB-2")
        assert corpus.weights.tolist() == [5.0, 0.0, 120.5]
    # numeric ids in JSON, which pyarrow's reader refuses, are read by the careful reader
    write(jsonl, "\n".join(json.dumps({**r, "id": n}) for n, r in enumerate(rows)))
    assert load_corpus(jsonl).ids == ("0", "1", "2")


def test_popularity_weights_replace_the_zipf_ranking(tmp_path):
    """Questions follow the weights: an article of weight 0 is never asked about."""
    rows = [{"title": f"Article {word} help", "content": f"All about {word}.", "popularity": weight}
            for word, weight in [("alpha", 1000), ("beta", 1), ("gamma", 0), ("delta", 1)]]
    path = write(tmp_path / "kb.jsonl", "\n".join(json.dumps(r) for r in rows))
    params = DayParams.model_validate({"corpus": {"source": str(path)}, "day_hours": 1, "questions": {"count": 40},
                                       "saves": {"count": 5, "mix": {"content": 1, "content_and_title": 0,
                                                                     "unpublish": 0}}})
    citations = run_day(params, 1)["citations"]
    asked = citations.drop_duplicates("answer_id")["target_article_id"].value_counts()
    assert asked.index[0] == "art-000001" and asked.iloc[0] >= 36
    assert "art-000003" not in asked.index
    first = citations[citations["article_id"] == "art-000001"]["popularity_rank"]
    assert set(first) == {0}


# -- bad input: one case each, the message names the file, line and field --------------------------


def bad_inputs(tmp_path: Path):
    huge = "x" * (MAX_CONTENT_CHARS + 1)
    return [
        ("empty folder", (tmp_path / "empty").mkdir() or tmp_path / "empty", r"empty: no articles"),
        ("folder without text files", write(tmp_path / "docs" / "a.pdf", b"%PDF").parent,
         r"docs: no articles: the folder .* holds no \.md"),
        ("empty heading", write(tmp_path / "h" / "a.md", "# \nbody").parent, r"a\.md, line 1, field 'title': no title"),
        ("jsonl row without title", write(tmp_path / "t.jsonl", '{"title": "Fine title", "content": "x"}\n'
                                          '{"content": "no title"}\n'), r"t\.jsonl, line 2, field 'title': no title"),
        ("csv empty title", write(tmp_path / "t.csv", 'title,content\nGood one,x\n" ",y\n'),
         r"t\.csv, line 3, column 'title': no title"),
        ("duplicate ids", write(tmp_path / "d.jsonl", '{"id": "A", "title": "One two", "content": ""}\n'
                                '{"id": "B", "title": "Three four", "content": ""}\n'
                                '{"id": "A", "title": "Five six", "content": ""}\n'),
         r"d\.jsonl, line 3, field 'id': duplicate id 'A': already used by line 1"),
        ("md not UTF-8", write(tmp_path / "u" / "a.md", b"# Title\nline two\ncaf\xe9\n").parent,
         r"a\.md, line 3: bytes that are not UTF-8 \(0xe9"),
        ("jsonl not UTF-8", write(tmp_path / "u.jsonl", b'{"title": "Ok title", "content": "x"}\n'
                                  b'{"title": "Caf\xe9", "content": "y"}\n'),
         r"u\.jsonl, line 2: bytes that are not UTF-8"),
        ("csv not UTF-8", write(tmp_path / "u.csv", b"title,content\nGood,x\nBad\xff,y\n"),
         r"u\.csv, line 3: bytes that are not UTF-8 \(0xff"),
        ("negative popularity", write(tmp_path / "n.csv", "title,content,popularity\nOne,x,3\nTwo,y,-2\n"),
         r"n\.csv, line 3, column 'popularity': popularity '-2' is negative"),
        ("popularity not a number", write(tmp_path / "p.jsonl", '{"title": "One", "content": "", "popularity": 1}\n'
                                          '{"title": "Two", "content": "", "popularity": "many"}\n'),
         r"p\.jsonl, line 2, field 'popularity': popularity 'many' is not a number"),
        ("content over the limit", write(tmp_path / "big.csv", f"title,content\nFine,x\nHuge,{huge}\n"),
         rf"big\.csv, line 3, column 'content': content of {MAX_CONTENT_CHARS + 1:,} characters is over the limit"),
        ("unknown kind of file", write(tmp_path / "kb.xlsx", b"PK"), r"kb\.xlsx: unknown kind of corpus file"),
        ("csv without a content column", write(tmp_path / "c.csv", "title,body\nOne,x\n"),
         r"c\.csv, line 1, column 'content': no 'content' column"),
        ("id a tool cannot carry", write(tmp_path / "i.jsonl", '{"id": "A\\u2028B", "title": "One two", '
                                         '"content": ""}\n'),
         r"i\.jsonl, line 1, field 'id': the id 'A\\u2028B' holds the character U\+2028"),
        ("id too long", write(tmp_path / "long" / "x.md", f"---\nid: {'k' * 300}\n---\n# Title\nbody").parent,
         r"x\.md, line 4, field 'id': the id has 300 characters, over the limit of 256"),
        ("two files, one id", write(tmp_path / "twice" / "ab.txt", "One").parent if write(
            tmp_path / "twice" / "ab.md", "Two") else None, r"ab\.txt, field 'id': duplicate id 'ab': already used by"),
        ("an id that is another row's number", write(tmp_path / "n.jsonl", '{"title": "One two", "content": ""}\n'
                                                     '{"id": "art-000001", "title": "Three", "content": ""}\n'),
         r"n\.jsonl, line 2, field 'id': the id 'art-000001' is also the number kbsim gives an earlier"),
    ]


def test_every_bad_input_names_the_file_line_and_field(tmp_path):
    for name, path, message in bad_inputs(tmp_path):
        with pytest.raises(InputError, match=message):
            load_corpus(path)
        print("refused:", name)


def test_a_bad_corpus_stops_kbsim_run_before_anything_is_written(tmp_path):
    write(tmp_path / "kb" / "good.md", "# A good article\nbody")
    write(tmp_path / "kb" / "bad.md", b"# Bad \xff article\n")
    config = write(tmp_path / "cfg" / "day.yaml", "params: {corpus: {source: ../kb}, day_hours: 1}\nseeds: 1\n")
    out = tmp_path / "results"
    run = subprocess.run([sys.executable, "-m", "kbsim", "run", str(config), "--out", str(out), "--no-progress"],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 2
    bad = tmp_path / "kb" / "bad.md"
    assert f"{config}: params.corpus.source: {bad}, line 1: bytes that are not UTF-8" in run.stderr
    assert not out.exists()


def test_a_corpus_path_is_relative_to_the_config_file_that_names_it(tmp_path):
    from kbsim.runner.load import load_config

    write(tmp_path / "kb" / "one.md", "# One article\nbody")
    write(tmp_path / "base.yaml", "params: {corpus: {source: kb}}\n")
    config = write(tmp_path / "sub" / "day.yaml", "extends: ../base.yaml\nseeds: 1\n")
    params = load_config(config, ["questions.count=3", "saves.count=2", "day_hours=1"]).runs()[0].params
    assert params.corpus.source == str(tmp_path / "kb")
    citations = run_day(params, 1)["citations"]
    assert citations["article_id"].tolist() == ["one"] * 3  # the file's path in the folder
    assert citations["cited_title"].tolist() == ["One article"] * 3
