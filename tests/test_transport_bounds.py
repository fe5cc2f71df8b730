"""Issue 40, defect 2: a loss rate near one half is refused, and the wire's retries and backoff are bounded."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from pydantic import ValidationError

from kbsim.params import MAX_LOSS_RATE, DayParams, TransportParams
from kbsim.sim import run_day
from kbsim.sim.transport import MAX_BACKOFF_S, MAX_SENDS, LossyClient, backoff_s
from kbsim.store import MemoryStore


@pytest.mark.parametrize("rate", [0.5, 0.4999, 0.499])
def test_a_loss_rate_at_which_the_day_cannot_finish_is_refused_naming_the_key(rate):
    with pytest.raises(ValidationError, match=r"loss_rate[\s\S]*day cannot finish; expected at most 0.49"):
        DayParams(transport={"loss_rate": rate})
    done = subprocess.run([sys.executable, "-m", "kbsim", "run", "control", "--seeds", "1", "--no-progress",
                           "--set", f"transport.loss_rate={rate}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "transport.loss_rate" in done.stderr


def test_the_backoff_is_bounded_however_many_retries():
    params = TransportParams(loss_rate=0.2)
    assert [backoff_s(params, retry) for retry in (1, 2, 3)] == [31.0, 32.0, 34.0]  # unchanged below the cap
    assert backoff_s(params, 5000) == params.timeout_s + MAX_BACKOFF_S
    assert all(math.isfinite(backoff_s(params, retry)) for retry in (1024, 1025, 10**9))


def test_a_read_only_call_that_never_gets_a_reply_is_given_up_and_recorded_as_undelivered():
    store = MemoryStore()
    store.create_knowledge_base("kb-1", [("Help", "How to reset a password.")])
    params = TransportParams.model_construct(loss_rate=0.5, timeout_s=30.0, backoff_s=1.0, max_retries=3)
    wire = LossyClient(store.client(grants={"kb-1"}, clock=lambda: 0.0), np.random.default_rng(1), params, "0")
    wire.call("search_knowledge_base", {"knowledge_base_id": "kb-1", "query": "anything"})
    (record,) = wire.ledger.records()
    assert wire.ledger.undelivered == {"search_knowledge_base": 1}
    assert (record.calls, record.sends, record.lost_requests + record.lost_replies) == (1, MAX_SENDS, MAX_SENDS)
    assert math.isfinite(record.wait_s)


def test_the_highest_loss_rate_accepted_finishes_a_day():
    tables = run_day(DayParams(transport={"loss_rate": MAX_LOSS_RATE}, edit={"delay_s": 600},
                               saves={"count": 40}, questions={"count": 20}), 1)
    transport = tables["transport"]
    assert (transport["sends"] >= transport["calls"]).all() and np.isfinite(transport["wait_s"]).all()
    # an edit whose every send was lost is recorded as lost, not retried for ever
    assert set(tables["intents"]["outcome"]) <= {"applied", "conflict", "gone", "lost"}
