"""kbsim.study / kbsim.Study: run what is missing, then answer with summary, tables, contrasts
and a rich display (issue 39)."""

from __future__ import annotations

import pytest

import kbsim

DAY = {"day_hours": 2, "corpus": {"articles": 40}, "saves": {"count": 40}, "questions": {"count": 20}}
CONFIG = {"name": "tiny", "params": DAY, "sweep": {"edit.delay_s": ["1min", "1h"]}, "seeds": 2,
          "contrasts": [{"metric": "rejection_rate", "baseline": {"edit.delay_s": "1min"}}]}


def test_a_study_runs_in_process_then_reuses_its_runs(tmp_path):
    study = kbsim.Study.from_config(CONFIG, out=tmp_path, progress=False)
    assert (study.result.runs_total, study.result.runs_computed, study.result.workers) == (4, 4, 1)
    assert study.directory == tmp_path / "tiny" and study.keys == ["scenario", "edit.delay_s"]
    rejections = study.summary("rejection_rate")
    assert list(rejections["edit.delay_s"]) == [60.0, 3600.0] and (rejections["seeds"] == 2).all()
    assert set(study.tables["citations"]["seed"]) == {1, 2}
    contrasts = study.contrasts()
    assert len(contrasts) == 1 and contrasts.iloc[0]["metric"] == "rejection_rate"
    html = study._repr_html_()
    assert html.startswith("<p><b>tiny</b>: 4 runs, 2 seeds per point") and "rejection_rate" in html
    assert "[" in study.cells().loc["rejection_rate", "default 3600"]  # value [low, high]
    again = kbsim.Study.from_config(CONFIG, out=tmp_path, progress=False)
    assert (again.result.runs_reused, again.result.runs_computed) == (4, 0)
    assert "4 reused, 0 computed" in repr(again)


def test_a_shipped_experiment_by_name_with_its_seeds_replaced(tmp_path):
    study = kbsim.study("reference", seeds=1, overrides=["saves.count=30", "questions.count=10",
                                                         "corpus.articles=40", "day_hours=1"],
                        out=tmp_path, progress=False)
    assert study.name == "reference" and study.config.seeds == [1] and study.result.runs_total == 10


def test_a_study_whose_every_run_fails_names_the_first_failure(tmp_path, monkeypatch):
    import kbsim.runner.executors
    import kbsim.runner.worker

    def broken(jobs, run_day):
        raise_in_day = [kbsim.runner.worker.error_outcome(job, RuntimeError("no day"), "") for job in jobs]
        return raise_in_day

    monkeypatch.setattr(kbsim.runner.executors, "run_batch", broken)
    first = r"tiny: all 4 runs failed; the first, default \(edit.delay_s=60.0\) seed 1, raised RuntimeError: no day"
    with pytest.raises(kbsim.RunsFailedError, match=first):
        kbsim.Study.from_config(CONFIG, out=tmp_path, progress=False)
