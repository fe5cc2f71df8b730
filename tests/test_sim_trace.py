"""A whole hand-made day asserted as one trace, SimPy-style."""

from __future__ import annotations

import numpy as np
import simpy

from kbsim.params import DayParams
from kbsim.sim.activity import QuestionArrival, SaveArrival
from kbsim.sim.corpus import Corpus
from kbsim.sim.popularity import Popularity
from kbsim.sim.processes import agent_edit, asker, checker, editor
from kbsim.sim.records import DayLog, TraceEntry
from kbsim.sim.world import Day
from kbsim.store import MemoryStore

KB = "kb-1"
STREAMS = ("editors", "save_targets", "question_draws")


def scripted_day():
    """Three articles, saves and questions that name their articles, two agent edits."""
    params = DayParams.model_validate(
        {
            "day_hours": 0.1,  # 360 s
            "corpus": {"articles": 3},
            "questions": {"query_words": 3},
            "checks": {"interval_s": 120},
            "edit": {"delay_s": 30, "max_retries": 1, "retry_waits_approval": False},
        }
    )
    store = MemoryStore()
    store.create_knowledge_base(KB)
    a1 = store.publish_article(KB, title="Reset password portal", content="reset your password", at=0)
    a2 = store.publish_article(KB, title="Billing invoice help", content="billing and invoices", at=0)
    a3 = store.publish_article(KB, title="Portal login help", content="log in to the portal", at=0)
    env = simpy.Environment()
    seeds = np.random.SeedSequence(0).spawn(3)
    by_rank = Popularity([a1, a2, a3], np.arange(3), 0.0)
    day = Day(
        env=env,
        store=store,
        client=store.client(grants={KB}, clock=lambda: env.now),
        kb_id=KB,
        params=params,
        streams={name: np.random.default_rng(s) for name, s in zip(STREAMS, seeds, strict=True)},
        log=DayLog(trace=[]),
        corpus=Corpus.build(params.corpus),
        questions_by=by_rank,
        saves_by=by_rank,
    )
    saves = [SaveArrival(100.0, "content", a1), SaveArrival(200.0, "unpublish", a2), SaveArrival(255.0, "content", a1)]
    questions = [QuestionArrival(50.0, a1), QuestionArrival(150.0, a2), QuestionArrival(230.0, a3),
                 QuestionArrival(245.0, a1)]

    def on_answer(answer):
        if answer.answer_id in (0, 3):
            day.edits.append(env.process(agent_edit(day, answer, iter([30.0, 30.0]))))

    env.process(editor(day, saves))
    asking = env.process(asker(day, questions, on_answer))
    checking = env.process(checker(day))
    env.run(until=simpy.AllOf(env, [asking, checking, *day.edits]))
    return day.log


def test_whole_day_trace():
    log = scripted_day()
    assert log.trace == [
        # q0 about article 1: "portal" also finds article 3; both are cited.
        TraceEntry("asker", 50.0, "q0 'Reset password portal' -> ['art-000001', 'art-000003']"),
        # The agent edits its first citation 30 s later, with the cited version: applied.
        TraceEntry("agent", 80.0, "edit a0 art-000001: applied/none"),
        # A person saves article 1: q0's first citation was already stale by the agent's own edit.
        TraceEntry("people", 100.0, "content art-000001"),
        TraceEntry("checker", 120.0, "check 1: 1/2 stale"),
        TraceEntry("asker", 150.0, "q1 'Billing invoice help' -> ['art-000002', 'art-000003']"),
        TraceEntry("people", 200.0, "unpublish art-000002"),
        TraceEntry("asker", 230.0, "q2 'Portal login help' -> ['art-000003', 'art-000001']"),
        # Held: q0's two, q1's two, q2's two; stale: q0's article 1 and q1's article 2 (gone).
        TraceEntry("checker", 240.0, "check 2: 2/6 stale"),
        TraceEntry("asker", 245.0, "q3 'Reset password portal' -> ['art-000001', 'art-000003']"),
        # A person saves article 1 between q3's read (245 s) and its edit (275 s): conflict,
        # then re-read and an immediate retry (no second approval wait): applied.
        TraceEntry("people", 255.0, "content art-000001"),
        TraceEntry("agent", 275.0, "edit a3 art-000001: conflict/applied"),
        # Every citation of article 1 is now stale (3), plus the gone article 2.
        TraceEntry("checker", 360.0, "check 3: 4/8 stale"),
    ]


def test_trace_records_agree_with_trace():
    log = scripted_day()
    outcomes = [
        (e.answer_id, e.outcome, e.retry_outcome, e.replay_ok, e.people_saves_between) for e in log.edits
    ]
    assert outcomes == [(0, "applied", "none", True, 0), (3, "conflict", "applied", True, 1)]
    # Re-read and poll are exact at every check (the checker asserts it); title sees only the unpublish.
    by_strategy = {(c.check_index, c.strategy): (c.flagged, c.true_stale) for c in log.checks}
    assert by_strategy[(3, "reread")] == (4, 4)
    assert by_strategy[(3, "poll")] == (4, 4)
    assert by_strategy[(3, "title")][0] == 1
