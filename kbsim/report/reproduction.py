"""The write-up reproduced, claim by claim: its figure, kbsim on the same day, the model, a verdict.

kbsim exists because of a short write-up that simulated one support day with a
stdlib-and-sqlite rebuild of four knowledge-base tools. Its tables were lost;
the figures in its prose are :data:`CLAIMS`' ``writeup`` values. Each claim is
set beside kbsim's estimate on the same day (``experiments/writeup.yaml``,
95% interval over seeds), the analytic model's prediction where it has one, and
a verdict:

- **reproduced**: the write-up's figure lies inside kbsim's interval (or the
  claim is a fact of the model kbsim implements and asserts);
- **differs**: it lies outside, with the reason: an unstated choice (then the
  variant of ``writeup.yaml`` whose interval holds it, if one does), or a real
  difference of model;
- **cannot hold as stated**: the write-up's own numbers contradict each other
  or the model's arithmetic; the working is given.

Nothing here is tuned to match a published number: the variants are the
choices the prose leaves open, each run as it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypedDict

import numpy as np
import pandas as pd

from kbsim.model import analytic
from kbsim.report.experiments import Experiment, match
from kbsim.report.links import write_page
from kbsim.report.pages import DESIGN_CHOICES_ANCHOR, DESIGN_CHOICES_TITLE
from kbsim.report.text_tables import format_estimate, markdown_table
from kbsim.sim.strategies import default_strategies
from kbsim.sim.strategies.poll import STRATEGY as POLL
from kbsim.sim.strategies.reread import STRATEGY as REREAD
from kbsim.sim.strategies.title import STRATEGY as TITLE
from kbsim.stats.intervals import Estimate, estimate
from kbsim.stats.summary import MetricSelector
from kbsim.units import format_duration

EXPERIMENT = "writeup"
LITERAL, CONTROL = "literal", "control"
#: The delays the literal rows pool over: kbsim's reference grid (the write-up states none).
GRID_S = (5.0, 60.0, 600.0, 3600.0)
DELAY = "edit.delay_s"


class _Reported(TypedDict):
    """The write-up's figures: counts as ``(part, whole)``, shares, counts and seconds."""

    stale: tuple[int, int]
    answers_stale: float
    control_stale: tuple[int, int]
    control_answers: tuple[int, int]
    title_found: tuple[int, int]
    edits: int
    replayed: int
    gone: int
    reject_1h: float
    runtime_s: float


#: What the write-up reports for its five seeds (1,200 citations in 600 answers).
WRITEUP: _Reported = {
    "stale": (369, 1200),
    "answers_stale": 0.8,
    "control_stale": (167, 1200),
    "control_answers": (280, 600),
    "title_found": (152, 369),
    "edits": 600,
    "replayed": 409,
    "gone": 19,
    "reject_1h": 0.4,
    "runtime_s": 25.7,
}


@dataclass(frozen=True)
class Row:
    """One line of the reproduction table."""

    section: str
    claim: str
    writeup: str
    kbsim: str
    model: str
    verdict: str


# -- reading the experiment ----------------------------------------------------------------------


class Writeup:
    """The writeup experiment's estimates by scenario and delay (None: the day without edits)."""

    def __init__(self, experiment: Experiment) -> None:
        self.experiment = experiment
        self.summary = experiment.summary
        self.per_run = experiment.per_run
        points = experiment.points
        self.params = {
            (row["scenario"], None if pd.isna(row[DELAY]) else float(row[DELAY])): row["params"]
            for _, row in points.iterrows()
        }
        self.seeds = experiment.seeds

    def day(self, scenario: str = LITERAL, delay: float | None = None):
        """The day parameters of ``scenario`` at edit ``delay`` (None: the day without edits)."""
        return self.params[(scenario, delay)]

    def rows(self, scenario: str, delay: float | None) -> pd.DataFrame:
        """The summary rows of ``scenario`` at edit ``delay``."""
        return match(self.summary, {"scenario": scenario, DELAY: delay})

    def estimate(self, selector: MetricSelector, scenario: str = LITERAL, delay: float | None = None) -> Estimate:
        """The metric ``selector`` picks, in ``scenario`` at ``delay``: its value and interval (NaN if absent)."""
        hit = self.rows(scenario, delay)
        hit = hit[selector.mask(hit)]
        if hit.empty:
            return Estimate(math.nan, math.nan, math.nan, math.nan, 0, "")
        row = hit.iloc[0]
        return Estimate(row["value"], row["ci_low"], row["ci_high"], row["se"], int(row["seeds"]), row["method"])

    def pooled(self, name: str, scenario: str = LITERAL, delays=GRID_S) -> tuple[Estimate, float, float]:
        """A share pooled over several delays' edits, per seed (the write-up's 600 edits):
        the estimate, and the summed successes and trials."""
        runs = self.per_run
        mine = runs[(runs["scenario"] == scenario) & runs[DELAY].isin(list(delays)) & (runs["name"] == name)]
        per_seed = mine.groupby("seed")[["successes", "trials"]].sum()
        result = estimate("proportion", per_seed["successes"], per_seed["trials"])
        return result, float(per_seed["successes"].sum()), float(per_seed["trials"].sum())

    def tables(self, name: str, scenario: str = LITERAL, delay: float | None = None) -> pd.DataFrame:
        """Table ``name``'s rows of ``scenario`` at edit ``delay``."""
        return match(self.experiment.tables[name], {"scenario": scenario, DELAY: delay})


def share(result: Estimate) -> str:
    """A share estimate as a percentage with its 95% interval."""
    return format_estimate(result.value, result.low, result.high, "share")


def inside(value: float, result: Estimate) -> bool:
    """Whether ``value`` lies within the estimate's interval."""
    return bool(result.low <= value <= result.high)


def variants_holding(data: Writeup, value: float, selector: MetricSelector, delay: float | None = None) -> list[str]:
    """The variants whose interval holds ``value`` (the literal day and the write-up's control excluded)."""
    found = []
    for scenario in data.summary["scenario"].unique():
        if scenario in (LITERAL, CONTROL):
            continue
        if inside(value, data.estimate(selector, scenario, delay)):
            found.append(scenario)
    return found


def compare(value: float, result: Estimate, otherwise: str, note: str = "") -> str:
    """``reproduced`` when ``value`` lies inside kbsim's interval, else ``differs`` and why."""
    if math.isnan(result.value):
        return "not measured"
    if inside(value, result):
        return f"reproduced: {note}" if note else "reproduced"
    return f"differs: {otherwise}"


#: The verdicts, each the start of a row's verdict text (then ": " and why).
VERDICTS = ("reproduced", "differs", "cannot hold as stated", "measured", "not comparable", "not measured")


def pct(value: float, digits: int = 1) -> str:
    """``value`` as a percentage with ``digits`` decimals."""
    return f"{100 * value:.{digits}f}%"


# -- the claims ----------------------------------------------------------------------------------


def _day_rows(data: Writeup) -> list[Row]:
    params = data.day()
    rows = [
        Row(
            "The day",
            "400 articles, 120 questions and 300 saves by people, over 8 hours",
            "400 / 120 / 300 / 8 h",
            f"{params.corpus.articles} / {params.questions.count} / {params.saves.count} / "
            f"{params.day_hours:g} h (configuration)",
            "-",
            "reproduced",
        ),
    ]
    zipf = analytic.zipf_weights(params.corpus.articles, params.zipf_s)[:10].sum()
    citations = data.tables("citations")
    firsts = citations[citations["position"] == 0]
    per_seed = firsts.assign(top=firsts["target_rank"].between(0, 9)).groupby("seed")["top"].agg(["sum", "count"])
    asked = estimate("proportion", per_seed["sum"], per_seed["count"])
    saves = data.tables("saves")
    people = saves[saves["actor"] == "people"]
    per_seed = people.assign(top=people["popularity_rank"].between(0, 9)).groupby("seed")["top"].agg(["sum", "count"])
    saved = estimate("proportion", per_seed["sum"], per_seed["count"])
    verdict = (
        "reproduced: 36.7% is the Zipf law's share of the top 10 ranks (the model column); what a day "
        f"draws is lower ({pct(asked.value)} of questions, {pct(saved.value)} of saves) because the top "
        "articles are often unpublished during the day and draws fall on the articles still published"
    )
    rows.append(
        Row(
            "The day",
            "Zipf s = 0.9 over one ranking for questions and saves; the top 10 articles get "
            "36.7% of the questions and of the saves",
            "36.7%",
            f"questions {share(asked)}, saves {share(saved)}",
            f"{pct(zipf, 2)} (Zipf law)",
            verdict,
        )
    )
    kinds = people[people["kind"].isin(["content", "content_and_title", "unpublish"])]
    mix = []
    for kind in ("content", "content_and_title", "unpublish"):
        per_seed = kinds.assign(k=kinds["kind"] == kind).groupby("seed")["k"].agg(["sum", "count"])
        mix.append(f"{share(estimate('proportion', per_seed['sum'], per_seed['count']))}")
    rows.append(
        Row(
            "The day",
            "Saves: 85% change the content, 10% the content and the title, 5% unpublish",
            "85 / 10 / 5%",
            " / ".join(mix),
            "85 / 10 / 5% (configuration)",
            "reproduced",
        )
    )
    per_answer = citations.groupby(["seed", "answer_id"]).size()
    rows.append(
        Row(
            "The day",
            "For each question the agent searches, reads the top two hits and cites both",
            "2 citations an answer",
            f"{per_answer.mean():.2f} citations an answer "
            f"({len(citations):,} in {len(per_answer):,} answers, {data.seeds} seeds)",
            "-",
            "reproduced",
        )
    )
    checks = data.tables("checks")
    per_day = checks.groupby(["seed", "strategy"]).size()
    rows.append(
        Row(
            "The day",
            "Every hour it checks every citation given so far in three ways (title, re-read, "
            "poll then re-read what moved)",
            "8 hourly checks x 3 ways",
            f"{int(per_day.max())} checks a day per strategy, {checks['strategy'].nunique()} strategies",
            "-",
            "reproduced",
        )
    )
    return rows


def _staleness_rows(data: Writeup) -> list[Row]:
    stale, citations = WRITEUP["stale"]
    claim = stale / citations
    end = MetricSelector("stale_citation_share")
    result = data.estimate(end)
    model = analytic.predict_end_staleness(data.day())
    holding = variants_holding(data, claim, end)
    reason = f"kbsim's day gives {pct(result.value)}; " + (
        f"the variant(s) {', '.join(holding)} hold {pct(claim, 2)}"
        if holding
        else "no variant of the open choices holds it"
    )
    rows = [
        Row(
            "Staleness",
            "At the end of the day almost a third of citations point to an article changed since "
            "it was read: 369 of 1,200",
            "30.75% (369 / 1,200)",
            share(result),
            pct(model["stale_citation_share"]),
            compare(claim, result, reason),
        )
    ]
    answers = data.estimate(MetricSelector("stale_answer_share"))
    upper = stale / (citations / 2)
    working = (
        f"cannot hold as stated: 369 stale citations in 600 answers of two citations can make at most "
        f"369 answers stale, {pct(upper)} < 80% (and at least 185, {pct(185 / 600)}). kbsim's "
        f"{pct(answers.value)} lies in that range"
    )
    rows.append(
        Row(
            "Staleness",
            "Four of five answers contain at least one such citation",
            "80%",
            share(answers),
            pct(model["stale_answer_share"]),
            working,
        )
    )
    return rows


def _uniform_lambda(target: float) -> float:
    """The save rate per article per day at which uniform saves leave ``target`` of citations stale."""
    lo, hi = 1e-6, 50.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 1 - (1 - math.exp(-mid)) / mid < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _control_rows(data: Writeup) -> list[Row]:
    params = data.day(CONTROL)
    stale, citations = WRITEUP["control_stale"]
    result = data.estimate(MetricSelector("stale_citation_share"), CONTROL)
    model = analytic.predict_end_staleness(params)
    rate = params.saves.count / params.corpus.articles
    plain = 1 - (1 - math.exp(-rate)) / rate
    needed = _uniform_lambda(stale / citations)
    working = (
        f"cannot hold as stated: with saves spread uniformly every article is saved at "
        f"{params.saves.count}/{params.corpus.articles} = {rate:g} times a day, so a citation given at a "
        f"uniform time is stale at the end with probability 1 - (1 - e^-{rate:g})/{rate:g} = {pct(plain)} "
        f"whatever people ask about. {pct(stale / citations)} needs {needed:.2f} saves per article per day "
        f"({needed * params.corpus.articles:.0f} saves, not {params.saves.count})"
    )
    rows = [
        Row(
            "Control",
            "The same 300 saves spread uniformly over the 400 articles: 13.9% of citations go stale (167 of 1,200)",
            "13.9% (167 / 1,200)",
            share(result),
            f"{pct(model['stale_citation_share'])} ({pct(plain)} without unpublishing)",
            working,
        )
    ]
    answers = data.estimate(MetricSelector("stale_answer_share"), CONTROL)
    stale_answers, total = WRITEUP["control_answers"]
    working = (
        f"cannot hold as stated: 280 answers with a stale citation need at least 280 stale citations, "
        f"but there are only 167 (at most {pct(stale / total)} of the 600 answers)"
    )
    rows.append(
        Row(
            "Control",
            "... and so do 46.7% of answers (280 of 600)",
            "46.7% (280 / 600)",
            share(answers),
            pct(model["stale_answer_share"]),
            working,
        )
    )
    return rows


def _check_rows(data: Writeup) -> list[Row]:
    found, stale = WRITEUP["title_found"]
    recall = data.estimate(MetricSelector("title_recall"))
    holding = variants_holding(data, found / stale, MetricSelector("title_recall"))
    reason = "kbsim counts, as the write-up does, each citation stale at the last check once; " + (
        f"the variant(s) {', '.join(holding)} hold it" if holding else "no variant holds it"
    )
    rows = [
        Row(
            "Title check",
            "It found 152 of the 369 stale citations",
            "41.2% (152 / 369)",
            share(recall),
            "-",
            compare(found / stale, recall, reason),
        )
    ]
    by_cause = {c: data.estimate(MetricSelector("title_recall", subset=c)) for c in ("gone", "retitled", "content")}
    rows.append(
        Row(
            "Title check",
            "All of them were renames or unpublishes; it never sees a content change",
            "content changes: 0%",
            f"gone {share(by_cause['gone'])}, retitled {share(by_cause['retitled'])}, content only "
            f"{share(by_cause['content'])}",
            "-",
            "reproduced"
            if by_cause["content"].value == 0
            else "differs: the title check flagged a content-only change",
        )
    )
    checks = data.tables("checks")
    exact = checks[checks["strategy"].isin([s.name for s in default_strategies() if s.exact])]
    agree = bool(
        (exact["flagged"] == exact["true_stale"]).all() and (exact["true_positives"] == exact["true_stale"]).all()
    )
    rows.append(
        Row(
            "Id checks",
            "Re-read and poll found exactly the same stale citations, asserted at every one of the 40 checks",
            "40 of 40 checks",
            f"{exact.groupby('strategy').size().min()} of {exact.groupby('strategy').size().min()} checks "
            "per strategy agree with the truth (the simulation asserts it at every check)",
            "-",
            "reproduced" if agree else "differs",
        )
    )
    saves = data.tables("saves")
    hour = (saves["time_s"] // 3600).astype(int)
    per_hour = saves.groupby(["seed", hour]).size()
    pages = checks[checks["strategy"] == POLL.name]
    params = data.day()
    rows.append(
        Row(
            "Id checks",
            "Poll: fewer than 100 changes an hour fit on one page, so each check was a single "
            "poll call, then re-reads of only what moved",
            "1 page a check",
            f"at most {per_hour.max()} events in an hour ({per_hour.mean():.1f} on average); "
            f"{pages['calls'].mean():.1f} calls a check: one page and the re-reads",
            f"{params.saves.count / params.day_hours:.1f} events an hour",
            "reproduced" if per_hour.max() < 100 else "differs",
        )
    )
    return rows


def _edit_rows(data: Writeup) -> list[Row]:
    rows = []
    grid = ", ".join(format_duration(d, "page") for d in GRID_S)
    edits = data.per_run[(data.per_run["scenario"] == LITERAL) & (data.per_run["name"] == "edits_made")]
    per_delay = edits[edits[DELAY].isin(list(GRID_S))].groupby(DELAY)["value"].sum()
    rows.append(
        Row(
            "Edits",
            "5 seeds, 150 edits per delay, 600 delayed edits in all",
            "150 a delay, 600",
            f"{', '.join(f'{v:.0f}' for v in per_delay)} at {grid}: {per_delay.sum():.0f} "
            "(every fourth answer, edit.exact_share)",
            "-",
            "reproduced" if (per_delay == 150).all() else "differs",
        )
    )
    params = data.day(LITERAL, 3600.0)
    model = analytic.predict_edit_outcomes(params, [*GRID_S, 7200.0, 14400.0]).set_index("delay_s")
    hour = data.estimate(MetricSelector("rejection_rate"), LITERAL, 3600.0)
    holding = variants_holding(data, WRITEUP["reject_1h"], MetricSelector("rejection_rate"), 3600.0)
    at = _delay_for(params, "rejection_rate", WRITEUP["reject_1h"])
    reason = (
        f"kbsim's day rejects {pct(hour.value)} at 1 h, the model {pct(model.loc[3600.0, 'rejection_rate'])}; "
        f"the model reaches 40% at a delay of {format_duration(at, 'page')}"
        + (f"; the variant(s) {', '.join(holding)} hold 40%" if holding else "")
    )
    rows.append(
        Row(
            "Edits",
            "About 4 in 10 are rejected at 1 h",
            "~40%",
            share(hour),
            pct(model.loc[3600.0, "rejection_rate"]),
            compare(WRITEUP["reject_1h"], hour, reason),
        )
    )
    retry, waits = (
        data.estimate(MetricSelector("retry_success"), s, 3600.0) for s in (LITERAL, "retry_waits_approval")
    )
    rows.append(
        Row(
            "Edits",
            "After a rejection: re-read, re-apply, write with the new version; every retry succeeded",
            "100%",
            f"{share(retry)} (immediate retry); {share(waits)} if a retry waits for approval again",
            pct(model.loc[3600.0, "retry_success"]),
            "reproduced: with an immediate retry (the write-up's description); a retry that waits for "
            f"approval again fails {pct(1.0 - waits.value)} of the time, against {pct(hour.value)} of first "
            "tries at 1 h: the articles that conflicted once are the ones people save most"
            if inside(1.0, retry)
            else "differs",
        )
    )
    rows += _counts_rows(data, params, model)
    return rows


def _grid() -> str:
    return ", ".join(format_duration(d, "page") for d in GRID_S)


def _delay_for(params, metric: str, target: float) -> float:
    """The delay at which the model's ``metric`` reaches ``target`` (bisection on a log scale)."""
    lo, hi = 1.0, 86400.0
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        if analytic.predict_edit_outcomes(params, [mid]).iloc[0][metric] < target:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def _counts_rows(data: Writeup, params, model: pd.DataFrame) -> list[Row]:
    """The 409 replays and 19 gone edits, and what they imply about the delay grid."""
    edits, replayed, gone = WRITEUP["edits"], WRITEUP["replayed"], WRITEUP["gone"]
    conflicts = edits - replayed - gone
    first_try = model.loc[list(GRID_S)]
    expected_conflicts = 150 * first_try["rejection_rate"].sum()
    expected_gone = 150 * first_try["gone_rate"].sum()
    mean_rate = conflicts / edits
    at = _delay_for(params, "rejection_rate", mean_rate)
    gone_at = _delay_for(params, "gone_rate", gone / edits)
    replays = data.pooled("replay_success")
    reject, _, _ = data.pooled("rejection_rate")
    gone_kbsim, gone_count, gone_trials = data.pooled("gone_rate")
    working = (
        "cannot hold as stated: not with a grid from seconds to an hour. Every retry succeeded, so had "
        "each success been replayed there would be 600 - 19 = 581 replays; 409 are first tries only, so "
        f"600 - 409 - 19 = {conflicts} first tries were rejected, {pct(mean_rate)} of all four delays. "
        f"On the model a grid like {_grid()} rejects {expected_conflicts:.0f} and finds "
        f"{expected_gone:.0f} gone of 600 (kbsim: {pct(reject.value)} rejected); {pct(mean_rate)} rejected "
        f"and {pct(gone / edits)} gone are what every delay would give at about "
        f"{format_duration(at, 'page')} and {format_duration(gone_at, 'page')}: the four delays were all near an hour "
        "or reached well beyond it"
    )
    rows = [
        Row(
            "Replays",
            "After each successful edit the same call was sent again: 409 of 409 returned the first "
            "result, marked as a replay, and wrote no event",
            "409 of 409",
            f"held in {replays[1]:.0f} of {replays[2]:.0f} (an invariant: a failed replay stops the run)",
            "-",
            working,
        )
    ]
    rows.append(
        Row(
            "Unpublished",
            "19 of the 600 delayed edits found the article unpublished",
            "3.2% (19 / 600)",
            f"{share(gone_kbsim)} ({gone_count:.0f} of {gone_trials:.0f} at {_grid()})",
            f"{pct(first_try['gone_rate'].mean())} ({expected_gone:.0f} of 600)",
            compare(
                gone / edits,
                gone_kbsim,
                f"at the grid's delays kbsim finds {pct(gone_kbsim.value)}; "
                f"the model reaches 3.2% at {format_duration(gone_at, 'page')}, as above",
                note=f"inside kbsim's wide {data.seeds}-seed interval, though the model expects "
                f"{expected_gone:.0f} of 600 on this grid (see the replay row)",
            ),
        )
    )
    checks = data.tables("checks")
    exact = checks[checks["strategy"].isin([s.name for s in default_strategies() if s.exact])]
    labelled = bool((exact["flagged_gone"] == exact["true_gone"]).all())
    rows.append(
        Row(
            "Unpublished",
            "The check reports such a citation as gone, not changed",
            "gone",
            "re-read and poll label every unpublished citation gone at every check" if labelled else "mislabelled",
            "-",
            "reproduced" if labelled else "differs",
        )
    )
    return rows


#: Where each advice row's counterfactual (the harm without it) is: the table in docs/results.md.
WITHOUT_IT = f"; without it: [{DESIGN_CHOICES_TITLE}](results.md#{DESIGN_CHOICES_ANCHOR})"


def _advice_rows(data: Writeup) -> list[Row]:
    """The write-up's advice, each with what kbsim measures when it is followed; each row
    links to the table of what turning it off costs (:data:`WITHOUT_IT`)."""
    return [replace(row, kbsim=row.kbsim + WITHOUT_IT) for row in _advice_followed(data)]


def _advice_followed(data: Writeup) -> list[Row]:
    title, reread, poll = (
        data.estimate(MetricSelector("calls_per_check", strategy=s)) for s in (TITLE.name, REREAD.name, POLL.name)
    )
    kb = {s: data.estimate(MetricSelector("bytes_per_check", strategy=s)) for s in (REREAD.name, POLL.name)}
    gone = data.estimate(MetricSelector("gone_citation_share"))
    hour = data.estimate(MetricSelector("rejection_rate"), LITERAL, 3600.0)
    ten = data.estimate(MetricSelector("rejection_rate"), LITERAL, 600.0)
    return [
        Row(
            "Advice",
            "Put a version in the citation: the same value the edit takes as expected_version",
            "-",
            f"a stale version is refused every time: {share(ten)} of edits at 10 min, {share(hour)} at 1 h, "
            "none applied over a newer save (the store's compare-and-swap; the conformance tests)",
            "-",
            "measured",
        ),
        Row(
            "Advice",
            "Keep a per-KB event log with a monotonic sequence, resumed from a cursor: one integer of "
            "client state replaces re-reading everything ever cited",
            "-",
            f"calls a check: poll {format_estimate(poll.value, poll.low, poll.high, 'count')} vs re-read "
            f"{format_estimate(reread.value, reread.low, reread.high, 'count')} (title "
            f"{format_estimate(title.value, title.low, title.high, 'count')}); result size: poll "
            f"{format_estimate(kb[POLL.name].value, kb[POLL.name].low, kb[POLL.name].high, 'bytes')} vs re-read "
            f"{format_estimate(kb[REREAD.name].value, kb[REREAD.name].low, kb[REREAD.name].high, 'bytes')}; both exact",
            "-",
            "measured",
        ),
        Row(
            "Advice",
            "Answer only from published content, and log unpublishing as an event",
            "-",
            f"{share(gone)} of citations point to an unpublished article by the end of the day; re-read and "
            "poll report each as gone, and the title check catches every one",
            "-",
            "measured",
        ),
        Row(
            "Advice",
            "Make edits compare-and-swap with a required idempotency key, and tell the model to "
            "re-read before editing, because a version from a one-hour-old citation fails about four times "
            "in ten",
            "~40% at 1 h",
            f"{share(hour)} at 1 h; a re-read before the write (an immediate retry) then succeeds",
            "-",
            "measured: the rate is in the Edits rows",
        ),
    ]


def _steady_state(data: Writeup) -> list[Row]:
    """Is the day a steady state? How much of the popularity drains into unpublished articles."""
    params = data.day()
    model = analytic.FreshnessModel.from_params(params)
    survive = model.published([params.day_s])[0]
    top_gone = 1 - survive[0]
    mass = float(np.dot(model.question_weights, 1 - survive))
    saves = data.tables("saves")
    gone = saves[(saves["kind"] == "unpublish") & (saves["time_s"] <= params.day_s)]
    seeds = sorted(data.tables("citations")["seed"].unique())
    top = np.array([((gone["seed"] == s) & (gone["popularity_rank"] == 0)).any() for s in seeds])
    weights = analytic.zipf_weights(params.corpus.articles, params.zipf_s)
    drained = np.array([weights[gone[gone["seed"] == s]["popularity_rank"].unique()].sum() for s in seeds])
    steady = data.estimate(MetricSelector("stale_citation_share"), "steady_state")
    literal = data.estimate(MetricSelector("stale_citation_share"))
    return [
        Row(
            "The day",
            "(not claimed) Every article starts fresh and none is published during the day, while "
            "unpublishing follows popularity",
            "-",
            f"the most popular article was gone by the end in {top.sum()} of {len(seeds)} days; "
            f"{pct(drained.mean())} of the question popularity sat on unpublished articles. With each "
            f"unpublished article replaced (steady_state): stale at the end {share(steady)} vs "
            f"{share(literal)}",
            f"gone in {pct(top_gone, 0)} of days; {pct(mass)} of the popularity",
            "measured: the literal day is not a steady state",
        )
    ]


def _runtime_row(data: Writeup) -> Row:
    """The run time of the literal day's 25 runs (no edits and four delays, five seeds).

    Not taken from the runs' recorded wall times: those vary from run to run of the study
    (other runs share the machine) and would make the page change when nothing else does.
    The like-for-like timing is a benchmark's.
    """
    return Row(
        "The day",
        "Seeds 1 to 5, Python 3.9.6 on an Apple M1, stdlib only: the whole run took 25.7 s",
        f"{WRITEUP['runtime_s']} s",
        "timed by `make bench` on one machine, beside a straightforward stdlib-and-SQLite rebuild of "
        "the same day (benchmarks/RESULTS.md, 'Against the straightforward design')",
        "-",
        "not comparable: the write-up's machine is not this one; compare the two designs on one "
        "machine in the benchmark",
    )


SECTIONS: tuple[Callable[[Writeup], list[Row]], ...] = (
    _day_rows,
    lambda data: [_runtime_row(data)],
    _steady_state,
    _staleness_rows,
    _control_rows,
    _check_rows,
    _edit_rows,
    _advice_rows,
)


def reproduction_rows(exps: Mapping[str, Experiment]) -> list[Row]:
    """Every claim of the write-up with kbsim's figure, the model's and the verdict."""
    data = Writeup(exps[EXPERIMENT])
    rows: list[Row] = []
    for section in SECTIONS:
        rows += section(data)
    return rows


def reproduction_table(exps: Mapping[str, Experiment]) -> pd.DataFrame:
    """The claims as a table (what notebook 04 shows)."""
    rows = reproduction_rows(exps)
    return pd.DataFrame(
        [(r.section, r.claim, r.writeup, r.kbsim, r.model, r.verdict) for r in rows],
        columns=["section", "claim", "write-up", "kbsim (same day, 95% interval)", "model", "verdict"],
    )


def write_reproduction(exps: Mapping[str, Experiment], path: str | Path) -> Path:
    """``docs/reproduction.md``: the table and what it says, regenerated by ``kbsim figures``."""
    path = Path(path)
    table = reproduction_table(exps)
    experiment = exps[EXPERIMENT]
    categories = table["verdict"].str.split(":").str[0]
    verdicts = categories.value_counts().reindex(VERDICTS).dropna().astype(int)
    table["verdict"] = [f"**{c}**{v[len(c):]}" for c, v in zip(categories, table["verdict"], strict=True)]
    lines = [
        "<!-- Generated by `kbsim figures` (kbsim/report/reproduction.py); do not edit by hand. -->",
        "# The write-up, reproduced claim by claim",
        "",
        "kbsim began as a rebuild of a short write-up: four knowledge-base tools of an MCP server, and a "
        "stdlib-and-sqlite simulation of one support day. Its tables were lost; the figures in its prose "
        "are the *write-up* column. *kbsim* is the same day in `experiments/writeup.yaml` "
        f"({experiment.seeds} seeds, as the write-up ran; 95% intervals over seeds, "
        "[model.md](model.md#statistics-one-interval-method)), *model* the analytic freshness model "
        "([model.md](model.md#the-analytic-model)).",
        "",
        "Verdicts: **reproduced** (the write-up's figure lies inside kbsim's interval, or the claim is a "
        "fact of the model kbsim implements and asserts), **differs** (outside, with the reason: an unstated "
        "choice, then the variant that matches if one does, or a real difference of model), **cannot hold "
        "as stated** (the write-up's own numbers contradict each other or the model's arithmetic; the "
        "working is given). Nothing is tuned to match: the variants are the choices the prose leaves open, "
        "each run as it is. " + ", ".join(f"{count} {verdict}" for verdict, count in verdicts.items()) + ".",
        "",
        markdown_table(table.drop(columns="section")),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_page(path, "\n".join(lines))
    return path


#: The README block this module writes (:data:`kbsim.report.pages.README_BLOCKS`).
README_BLOCK = "writeup"


def readme_paragraph(exps: Mapping[str, Experiment]) -> list[str]:
    """The README's paragraph on the write-up, every number from :data:`WRITEUP`, the model's
    arithmetic and kbsim's estimate on the same day (the working is in docs/reproduction.md)."""
    data = Writeup(exps[EXPERIMENT])
    stale, citations = WRITEUP["stale"]
    control_stale, _ = WRITEUP["control_stale"]
    control = data.day(CONTROL)
    rate = control.saves.count / control.corpus.articles
    plain = 1 - (1 - math.exp(-rate)) / rate
    end = data.estimate(MetricSelector("stale_citation_share"))
    more = "more" if end.low > stale / citations else "no more"
    return [
        "**The original write-up, checked.** kbsim began as a rebuild of a short write-up whose tables were "
        "lost; [docs/reproduction.md](docs/reproduction.md) sets each of its claims beside kbsim on the same "
        "day. Its model holds: the title check never sees a content change, re-read and poll are exact at "
        "every check, one poll page an hour suffices, every replay returns the first result, and an "
        "immediate re-read-and-retry after a conflict succeeds. Its headline numbers do not all hold: "
        f"\"four of five answers\" stale cannot follow from {stale} stale citations in {citations // 2} "
        f"answers (at most {pct(stale / (citations / 2))}), its control's {pct(control_stale / citations)} "
        f"is half of what uniform saves give on the model's own arithmetic ({pct(plain)}), and its "
        f"{WRITEUP['replayed']} replays with {WRITEUP['gone']} edits finding the article gone imply delays "
        "of about an hour or more, not a grid from seconds to an hour. On the write-up's own Zipf day "
        f"(`experiments/{EXPERIMENT}.yaml`, {exps[EXPERIMENT].seeds} seeds) kbsim finds "
        f"{more} staleness than the write-up's \"almost a third\" "
        f"({share(end)} of citations stale at the end, against {pct(stale / citations, 2)}; the reference "
        "study's day, in the table above, is another day).",
    ]
