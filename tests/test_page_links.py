"""Generated pages carry no link to a file that is not beside them (kbsim.report.links)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kbsim.report.links import without_missing_links, write_page

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["figures/README.md", "docs/results.md", "docs/reproduction.md"]


@pytest.mark.parametrize("page", PAGES)
def test_in_a_checkout_every_link_of_a_page_is_there_and_the_page_is_unchanged(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    assert without_missing_links(text, ROOT / page) == text


def test_outside_a_checkout_a_link_to_a_missing_file_names_its_place_in_the_repository(tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "x.png").write_bytes(b"png")
    text = (
        "See [docs/model.md](../docs/model.md#the-analytic-model), [the pairing](../validation/PAIRING.md), "
        "[x](x.png), ![a figure](x.png), [web](https://example.org/a.md) and [here](#top)."
    )
    page = write_page(tmp_path / "figures" / "README.md", text)
    written = page.read_text(encoding="utf-8")
    assert written == (
        "See `docs/model.md` (in kbsim's repository), the pairing (`validation/PAIRING.md` in kbsim's "
        "repository), [x](x.png), ![a figure](x.png), [web](https://example.org/a.md) and [here](#top)."
    )
    for target in re.findall(r"\]\(([^)#]+)", written):  # every relative link left finds its file
        assert target.startswith("https://") or (page.parent / target).exists()
