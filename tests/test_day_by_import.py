"""The runner reaches the day by import, and a run's parameters are validated, sized to their
corpus and checked once, on the way down: never again in the worker or in the day."""

from __future__ import annotations

from collections import Counter

import pytest
from pydantic import BaseModel

import kbsim.runner.config
import kbsim.sim.day
from kbsim.params import DayParams
from kbsim.runner.load import config_from_dict
from kbsim.runner.worker import DEFAULT_RUN_DAY, column_dtypes, make_job, run_batch
from kbsim.sim.day import run_day

#: A short day on the sample corpus from files: its counts are sized to the corpus, and its
#: titles checked against the title search's hits.
CONFIG = {"name": "sized", "params": {"day_hours": 1, "corpus": {"source": "kbsim:sample"}}, "seeds": [1, 2]}


def test_the_worker_runs_the_day_it_imports():
    assert DEFAULT_RUN_DAY is run_day


@pytest.fixture
def counted(monkeypatch) -> Counter:
    """Calls of DayParams validation, sizing and the title check, counted from now on."""
    calls: Counter = Counter()
    sized_to = DayParams.sized_to

    def counting_sized_to(self, articles):
        calls["sized_to"] += 1
        return sized_to(self, articles)

    monkeypatch.setattr(DayParams, "sized_to", counting_sized_to)
    validate = BaseModel.model_validate.__func__

    def counting_validate(cls, *args, **kwargs):
        if cls is DayParams:
            calls["validate"] += 1
        return validate(cls, *args, **kwargs)

    monkeypatch.setattr(DayParams, "model_validate", classmethod(counting_validate))
    for module in (kbsim.runner.config, kbsim.sim.day):
        refuse = module.refuse_crowded_titles

        def counting_refuse(params, loaded, refuse=refuse):
            calls["refuse_crowded_titles"] += 1
            return refuse(params, loaded)

        monkeypatch.setattr(module, "refuse_crowded_titles", counting_refuse)
    return calls


def test_a_run_is_validated_sized_and_checked_once_on_the_way_down(counted):
    config = config_from_dict(CONFIG)
    runs = config.runs()
    assert counted["sized_to"] == 1 and counted["refuse_crowded_titles"] == 1  # once for the point, in the config
    sized = runs[0].params
    assert {"count"} <= sized.saves.model_fields_set & sized.questions.model_fields_set  # sized: given now
    counted.clear()
    jobs = [make_job(run, column_dtypes(config.swept, runs)) for run in runs]
    outcomes = run_batch(jobs)
    assert all("files" in outcome for outcome in outcomes), outcomes
    assert counted == Counter()  # the worker and the day trust what came down: no second pass
    # a day run on its own, without a config, is still sized and checked (once)
    run_day(DayParams.model_validate(CONFIG["params"]), 1)
    assert counted == Counter(validate=1, sized_to=1, refuse_crowded_titles=1)
