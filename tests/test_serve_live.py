"""``kbsim serve --live`` as a user starts it: the day it runs, and a day that stops (issue 38)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("serve")

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
