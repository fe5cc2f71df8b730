"""A notebook's prose states no number its outputs do not show.

Numbers typed into Markdown go stale: notebook 01 once said "The reference study has 5 seeds"
beside outputs from 20. So every number in a committed notebook's Markdown cells must either be
shown by the notebook's own outputs (the same number followed by the same word: "20 seeds" in a
Markdown cell needs "20 seeds" in an output, which a code cell renders from the results), or be
a structural number declared below with its reason (a section number, a formula's constant, a
standard's name). Prose with numbers from the results is rendered by code
(``IPython.display.Markdown``), so it is in the outputs by construction.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: A number as prose writes it: 20, 1,200, 0.9, 30.75%, with the word that follows it.
NUMBER = re.compile(r"(?<![\w.,/^-])(\d+(?:,\d{3})*(?:\.\d+)?%?)(?![\w,.]?\d)(?:\s+([^\W\d]+|\S))?")

#: A share or a ratio as prose writes it in words ("a third of the edits", "twice as many"), which the
#: outputs never show as such: stale as easily as a typed number, so declared like one or rendered.
RATIO_WORDS = re.compile(
    r"\b(?:half|halves|thirds?|quarters?|fifths?|tenths?|twice|double[sd]?|triple[sd]?|"
    r"(?:two|three|four|five|six|seven|eight|nine|ten) times|"
    r"(?:one|two|three|four|five|six|seven|eight|nine) (?:in|of|out of) (?:two|three|four|five|six|ten))\b",
    re.IGNORECASE,
)

#: Structural numbers, per notebook: a phrase of its Markdown holding the number -> why it may be typed.
ALLOWED: dict[str, dict[str, str]] = {
    "*": {
        "95% interval": "the confidence level of every interval kbsim gives (kbsim.stats.intervals.CONFIDENCE)",
        "95% intervals": "the confidence level of every interval kbsim gives (kbsim.stats.intervals.CONFIDENCE)",
        "ISO 8601": "the name of a standard",
    },
    "01_staleness": {
        "1 − exp(−λᵢ(t − u))": "the model's formula (docs/model.md)",
        "U(0, t)": "the model's formula: question times uniform from 0 to t",
    },
    "02_check_cost": {
        "E[max(1, ⌈events/page⌉)]": "the model's formula: at least one poll page per check",
    },
    "03_edit_rejections": {
        "E[1 − exp(−λᵢ d)]": "the model's formula (docs/model.md)",
        "After a quarter of its answers": "the edit experiment's share of answers edited (EditParams.share, 25%; "
                                          "the figure's caption renders it)",
    },
    "04_reproduction": {
        "from the literal day (1) towards the\ncontrol (0)": "the ends of the rank correlation's range",
    },
    "05_check_policy": {},
    "06_your_logs": {},
}


def _heading_number(stem: str) -> str:
    """The notebook's own number in its title (``# 3. ...`` for 03_*), a section number."""
    return f"# {int(stem.split('_', 1)[0])}."


def _output_text(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            for kind in ("text/markdown", "text/plain", "text/html"):
                parts.append(str(output.get("data", {}).get(kind, "")))
    return re.sub(r"\s+", " ", " ".join(parts))


def unbacked_numbers(notebook, stem: str) -> list[str]:
    """Each number in ``notebook``'s Markdown cells that neither its outputs show (with the word
    after it) nor :data:`ALLOWED` declares, as ``"cell N: 'number word'"``."""
    outputs = _output_text(notebook)
    allowed = {**ALLOWED["*"], **ALLOWED.get(stem, {}), _heading_number(stem): "the notebook's number"}
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "markdown":
            continue
        text = cell.source
        covered = [
            (m.start(), m.start() + len(phrase))
            for phrase in allowed
            for m in re.finditer(re.escape(phrase), text)
        ]
        for match in NUMBER.finditer(text):
            if any(start <= match.start(1) < end for start, end in covered):
                continue
            number, word = match.group(1), match.group(2) or ""
            phrase = f"{number} {word}".strip() if word and word[0].isalpha() else number
            after = r"\s+" + re.escape(word) if word[:1].isalpha() else r"(?![\w,.]?\d)"
            pattern = r"(?<![\w.,])" + re.escape(number) + after
            if not re.search(pattern, outputs):
                found.append(f"cell {index}: {phrase!r}")
        for match in RATIO_WORDS.finditer(text):
            if not any(start <= match.start() < end for start, end in covered):
                found.append(f"cell {index}: {match.group(0)!r}")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_number_in_the_prose_is_in_the_outputs_or_declared(path):
    notebook = nbformat.read(path, as_version=4)
    assert unbacked_numbers(notebook, path.stem) == [], (
        f"{path.name}: numbers typed into Markdown that no output shows; render them from the results "
        "(IPython.display.Markdown in a code cell) or declare a structural one in ALLOWED with its reason"
    )


def test_every_declared_phrase_is_still_in_its_notebook():
    """An allow-list entry whose phrase is gone would hide nothing, but it would go stale too."""
    for path in NOTEBOOKS:
        markdown = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
        for phrase in ALLOWED.get(path.stem, {}):
            assert phrase in markdown, f"{path.name}: ALLOWED phrase {phrase!r} is no longer in its Markdown"


def _notebook(markdown: str, output: str):
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 1. Staleness"),
        nbformat.v4.new_code_cell("print(...)", outputs=[nbformat.v4.new_output("stream", text=output)]),
        nbformat.v4.new_markdown_cell(markdown),
    ])


def test_the_old_five_seeds_sentence_is_caught():
    """Notebook 01's old sentence beside outputs of the 20-seed study: caught, although a "5"
    appears in the outputs (in "0.5" and "15"), because the number must come with its word."""
    old = "The reference study has 5 seeds, hence the wide bands."
    output = "model inside the 95% CI at 88% of the points; 20 seeds; 0.5; 15 runs"
    assert unbacked_numbers(_notebook(old, output), "01_staleness") == ["cell 2: '5 seeds'"]
    assert unbacked_numbers(_notebook(old.replace("5 seeds", "20 seeds"), output), "01_staleness") == []


def test_percentages_and_thousands_are_matched_whole():
    output = "poll: 1,200 saves a day; 12.5% stale"
    assert unbacked_numbers(_notebook("At 1,200 saves, 12.5% stale.", output), "01_staleness") == []
    assert unbacked_numbers(_notebook("At 200 saves, 2.5% stale.", output), "01_staleness") == [
        "cell 2: '200 saves'", "cell 2: '2.5% stale'",
    ]


def test_shares_and_ratios_in_words_are_caught():
    """Notebook 03 ended on "after an hour, a third of the edits conflict, and a retry after another
    hour's approval fails about as often" (its retries failed twice as often), and notebook 04 called
    the write-up's control "a third" of the model's share (it is 0.47 of it): words, not digits, so
    the number check let both through."""
    old_03 = ("Rejections stay rare while approvals take seconds to a minute and climb steeply past ten "
              "minutes; after an hour, a third of the edits conflict.")
    old_04 = "its control is a third of what uniform saves over 400 articles give, and twice the write-up's"
    output = "rejection_rate 42.1 min 0.239; 400 articles"
    assert unbacked_numbers(_notebook(old_03, output), "01_staleness") == ["cell 2: 'third'"]
    assert unbacked_numbers(_notebook(old_04, output), "01_staleness") == ["cell 2: 'third'", "cell 2: 'twice'"]
    declared = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 3. Edits"),
        nbformat.v4.new_markdown_cell("After a quarter of its answers, it edits."),
    ])
    assert unbacked_numbers(declared, "03_edit_rejections") == []
