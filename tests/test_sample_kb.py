"""The shipped sample help desk: 400 real-English articles, always the same, and `kbsim corpus`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kbsim.inputs import SAMPLE, load_corpus
from kbsim.inputs.sample import SAMPLE_ARTICLES, sample_articles

REPO = Path(__file__).resolve().parents[1]
#: SHA-256 of the sample's text: a change to the generator or its material must be deliberate
#: (it changes sample_kb's results), so it must update this too.
SAMPLE_DIGEST = "93fb09baed1851ae"


def test_the_sample_is_400_distinct_help_articles_and_never_changes():
    articles = sample_articles()
    titles = [title for title, _ in articles]
    assert len(articles) == SAMPLE_ARTICLES == 400 and len(set(titles)) == 400
    assert load_corpus(SAMPLE).digest.startswith(SAMPLE_DIGEST)
    for title in ("Reset your VPN password", "Printer shows offline after a driver update",
                  "Outlook keeps asking for your password", "Set up work email on iPhone or iPad"):
        assert title in titles
    for title, content in articles:
        assert re.fullmatch(r"[A-Z0-9][\w .,:'()/?+&-]+", title), title
        assert 2 <= len(title.split()) <= 20, title
        assert "\n## " in content and re.search(r"^(1\.|-) [A-Z]", content, re.M), title
        assert 40 <= len(content.split()) <= 300, title


def test_kbsim_corpus_writes_the_sample_and_checks_it(tmp_path):
    def kbsim(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kbsim", "corpus", *args], capture_output=True, text=True,
                              cwd=REPO, timeout=120)

    written = kbsim("sample", str(tmp_path / "kb"))
    assert written.returncode == 0, written.stderr
    assert len(list((tmp_path / "kb").glob("*.md"))) == 400
    folder = load_corpus(tmp_path / "kb")
    assert sorted(folder.articles()) == sorted(sample_articles())
    checked = kbsim("check", str(tmp_path / "kb"))
    assert checked.returncode == 0 and f"{tmp_path / 'kb'}: 400 articles" in checked.stdout
    assert kbsim("sample", str(tmp_path / "kb")).returncode == 2  # never overwrites
    (tmp_path / "bad.csv").write_text("title,content,popularity\nOne,x,-1\n")
    refused = kbsim("check", str(tmp_path / "bad.csv"))
    assert refused.returncode == 2
    assert "bad.csv, line 2, column 'popularity': popularity '-1' is negative" in refused.stderr
