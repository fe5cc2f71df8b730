"""validation/fit_day_kinds.py's page handling: ``--only advice`` rewrites step 5's part of its
section in validation/FIT.md and leaves the rest of the page as it was (no simulation here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "validation" / "fit_day_kinds.py"


def _script():
    spec = importlib.util.spec_from_file_location("kbsim_fit_day_kinds", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_only_advice_rewrites_step_5s_part_and_nothing_else(tmp_path):
    script = _script()
    page = tmp_path / "FIT.md"
    before = (f"# Page\n\nkept above\n\n{script.START}\n\n## Kinds\n\nsteps 1 to 4\n\n{script.ADVICE}\n\n"
              f"### The advice\n\nold step 5\n\n{script.END}\n\n## After\n\nkept below\n")
    page.write_text(before, encoding="utf-8")
    assert script.has_advice_part(before)
    script.write_section(page, f"{script.ADVICE}\n\nnew step 5\n\n{script.END}\n", only_advice=True)
    assert page.read_text(encoding="utf-8") == before.replace("### The advice\n\nold step 5", "new step 5")


def test_only_advice_on_a_page_without_step_5s_part_exits_2_naming_it(tmp_path, capsys):
    script = _script()
    page = tmp_path / "FIT.md"
    text = f"{script.START}\n\nsteps 1 to 4, written before step 5 had its marker\n\n{script.END}\n"
    page.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exit_:
        script.main(["--only", "advice", "--out", str(page), "--runs", str(tmp_path / "runs")])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--only advice" in error and str(page) in error and "Traceback" not in error
    assert page.read_text(encoding="utf-8") == text and not (tmp_path / "runs").exists()


def test_the_committed_page_has_step_5s_part():
    script = _script()
    assert script.has_advice_part((SCRIPT.parent / "FIT.md").read_text(encoding="utf-8"))
