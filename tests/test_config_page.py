"""``docs/config.md`` is written from the schema that validates a config: the two cannot differ."""

from __future__ import annotations

from pathlib import Path

from kbsim.params import DayParams
from kbsim.report.config_page import TOP_LEVEL, _rows, config_page
from kbsim.runner.config_keys import KEYS

PAGE = Path(__file__).resolve().parents[1] / "docs" / "config.md"


def test_the_page_is_what_the_schema_writes():
    assert PAGE.read_text(encoding="utf-8") == config_page(), (
        "docs/config.md differs from the schema: python -m kbsim.report.config_page docs/config.md"
    )


def test_every_key_and_parameter_is_on_the_page():
    text = PAGE.read_text(encoding="utf-8")
    assert set(TOP_LEVEL) == set(KEYS)
    for name in KEYS:
        assert f"| `{name}` |" in text
    names = [row[0] for row in _rows(DayParams)]
    assert "saves.mix.unpublish" in names and "edit.delay_s" in names
    for name in names:
        assert f"| `{name}` |" in text
