"""``kbsim serve --live`` as a user starts it: the day it runs, and a day that stops (issue 38)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("serve-live")

REPO = Path(__file__).resolve().parents[1]


def ten_articles(folder: Path) -> Path:
    """A knowledge base of 10 Markdown articles, each with words enough to revise."""
    folder.mkdir()
    for n in range(10):
        (folder / f"topic-{n}.md").write_text(
            f"# Topic {n}\n\nHow to reset item {n}.\nOpen the settings page and choose reset.\n"
            f"Wait for the light to turn green.\nCall the help desk if item {n} still fails.\n")
    return folder


def startup_lines(*args: str, until: str, timeout_s: float = 60) -> str:
    """stderr of ``kbsim serve ARGS`` up to the first line holding ``until`` (the server is then stopped)."""
    proc = subprocess.Popen([sys.executable, "-m", "kbsim", "serve", *args], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = []
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            if until in line:
                return "".join(seen)
        raise AssertionError(f"no line with {until!r} in:\n{''.join(seen)}")
    finally:
        proc.kill()
        proc.wait()


def test_live_day_on_a_small_corpus_is_sized_as_kbsim_run_sizes_it(tmp_path):
    """10 articles: 0.75 saves per article a day, so 8 saves per 8 hours (was 300, the reference day's),
    stated when the server starts."""
    from kbsim.params import DayParams

    corpus = ten_articles(tmp_path / "kb")
    assert DayParams.model_validate({"corpus": {"source": str(corpus)}}).sized_to(10).saves.count == 8
    text = startup_lines("--corpus", str(corpus), "--live", until="live: people save")
    assert "live: people save 8 times per 8 simulated hours" in text, text


def test_served_corpus_keeps_a_count_not_given_unset():
    """The cause: ``served_corpus`` re-parsed the settings, so every default looked given."""
    from kbsim.params import DayParams
    from kbsim.serve.server import served_corpus

    params = served_corpus(DayParams(), "kbsim:sample-de")
    assert "count" not in params.saves.model_fields_set
    assert params.sized_to(52).saves.count == 39
    given = served_corpus(DayParams.model_validate({"saves": {"count": 7}}), "kbsim:sample-de")
    assert given.sized_to(52).saves.count == 7


def test_a_live_day_that_stops_tells_every_http_session_and_exits_non_zero(tmp_path):
    """Over HTTP as over stdio: a critical log notification to every open session, then exit 2
    with one line (before, the server kept serving errors until SIGTERM, and told no one)."""
    import re
    import signal

    from mcp import types

    from tests.test_serve_resources import session_to

    config = tmp_path / "live.yaml"  # every person's save is a retitle, 333 a wall second
    config.write_text("corpus: {articles: 3}\nday_hours: 1\nsaves:\n  count: 20000\n"
                      "  mix: {content: 0.0, content_and_title: 1.0, unpublish: 0.0}\n")
    errlog = tmp_path / "stderr.log"
    with errlog.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "kbsim", "serve", "--http", "127.0.0.1:0", "--live",
                                 "--config", str(config)], cwd=REPO, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while (found := re.search(r"listening on (http://\S+/mcp)", errlog.read_text())) is None:
            assert proc.poll() is None and time.monotonic() < deadline, errlog.read_text()
            time.sleep(0.1)
        heard: list = []
        with session_to(found.group(1), heard) as (portal, session, _), session_to(found.group(1), heard):
            for number in (1, 2, 3):  # the agent sets each title to "": a retitle has no word to rework
                for attempt in range(500):
                    read = portal.call(session.call_tool, "read_knowledge_article",
                                       {"knowledge_base_id": "kb-1", "article_id": f"art-{number:06d}"})
                    edit = portal.call(session.call_tool, "edit_knowledge_article", {
                        "knowledge_base_id": "kb-1", "article_id": f"art-{number:06d}", "content": "emptied",
                        "title": "", "expected_version": read.structured_content["updated_at"],
                        "idempotency_key": f"empty-{number}-{attempt}"})
                    if not edit.is_error:
                        break
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
        assert proc.wait(timeout=30) == 2
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=15)
    told = [note for note in heard if isinstance(note, types.LoggingMessageNotification)]
    assert len(told) == 2, heard  # both sessions
    assert {note.params.level for note in told} == {"critical"}
    assert all("the live day stopped" in note.params.data for note in told)
    last = errlog.read_text(errors="replace").strip().splitlines()[-1]
    assert last.startswith("kbsim serve: --live: the live day stopped at simulated"), last
