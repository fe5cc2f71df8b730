"""Does ``kbsim fit`` recover what it should? Bias and coverage of every estimate, on logs of known days.

Generates logs from known days (:class:`kbsim.fit.synthetic.KnownDays`: 400 articles, 300
saves and 120 questions a day over 8 office hours, Zipf exponents 0.6 to 1.4, rank
correlations 0 to 1), with Poisson saves and with saves in sessions (3 saves a session
on average, 90 s apart), over 1 to 14 days; fits each exactly as ``kbsim fit`` does
(:func:`kbsim.fit.fit_log`), and reports, per estimate, the bias (mean estimate minus the
truth) and the coverage of its 95% interval (the share of logs whose interval holds the
truth), by number of days. The exponents and correlations cycle through their grid, so
each cell of the table pools them equally; a second table splits the Zipf exponent and
the rank correlation by their true value (3 days or more).

The truth of each estimate is the generator's parameter; for the rank correlation, the
correlation the drawn knowledge base realises (:func:`kbsim.fit.synthetic.realized_truth`);
for the share of saves in bursts and the dispersion index (no parameter of the
generator), their value over 400 generated days of the same exponent and arrivals.
It also measures the goodness-of-fit test's size (how often it rejects a true Zipf law)
and power (against a Zipf-Mandelbrot law, ``(rank + 5)^-s``), and how often the fit calls
a Poisson day bursty or a flat day far from flat.

    python validation/fit.py                    # 200 logs per arrival model and number of days
    python validation/fit.py --studies 60       # a quicker, rougher measurement

Writes validation/FIT.md (``--out``). The test suite runs a quick version
(tests/test_fit_validation.py) and fails below 90% coverage.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from kbsim.fit import fit_log
from kbsim.fit.estimates import BURST_WINDOW_S
from kbsim.fit.synthetic import KnownDays, generate_log, realized_truth

EXPONENTS = (0.6, 0.8, 1.0, 1.2, 1.4)
CORRELATIONS = (0.0, 0.5, 0.75, 1.0)
DAYS = (1, 2, 3, 5, 7, 14)
ARRIVALS = {"Poisson saves": 1.0, "saves in sessions": 3.0}
BASE = KnownDays(articles=400, saves_per_day=300.0, questions_per_day=120.0, hours=(9, 17), session_gap_s=90.0)
#: Days pooled for the truth of the burst share and the dispersion index.
TRUTH_DAYS = 400
#: The estimates reported, by name: a label and whether the 93-97% target applies to it.
ESTIMATES = {
    "saves_per_day": ("saves per day (mean over days)", True),
    "questions_per_day": ("questions per day (mean over days)", True),
    "zipf_saves": ("Zipf exponent of saves (MLE, or cross-day moment when bursty)", True),
    "zipf_questions": ("Zipf exponent of questions (MLE)", True),
    "rank_correlation": ("rank correlation, saves to questions (cross moment)", False),
    "mix_content": ("save mix: content", False),
    "mix_content_and_title": ("save mix: content and title", False),
    "mix_unpublish": ("save mix: unpublish", False),
    "questions_per_hour": ("questions per hour, each hour (pooled over the 8)", False),
    "burst_share": ("share of saves within 5 min of one of the same article", False),
    "dispersion": ("dispersion index of saves per article-hour", False),
}


def known(arrivals: str, days: int, index: int) -> KnownDays:
    """The ``index``-th known day of a cell: exponents and correlations cycle through their grids."""
    return replace(BASE, days=days, zipf_s=EXPONENTS[index % len(EXPONENTS)],
                   rank_correlation=CORRELATIONS[(index // len(EXPONENTS)) % len(CORRELATIONS)],
                   session_saves=ARRIVALS[arrivals])


def _seed(arrivals: str, days: int, index: int) -> int:
    return 100_000 * (list(ARRIVALS).index(arrivals) + 1) + 1_000 * days + index


def sorted_counts_mle(counts: np.ndarray, n: int) -> float:
    """The textbook rank-frequency fit, for comparison: the articles ranked by their own counts,
    the discrete Zipf law over ranks 1..n fitted by maximum likelihood."""
    from scipy.optimize import minimize_scalar

    ordered = np.zeros(n)
    ordered[: len(counts)] = np.sort(counts)[::-1]
    log_rank = np.log(np.arange(1, n + 1, dtype=float))
    total = ordered.sum()

    def negative(s: float) -> float:
        scores = -s * log_rank
        top = scores.max()
        return float(s * np.dot(ordered, log_rank) + total * (top + math.log(np.exp(scores - top).sum())))

    return float(minimize_scalar(negative, bounds=(0.0, 5.0), method="bounded").x)


def study(case: tuple[str, int, int]) -> list[dict]:
    """One log of a cell, fitted: a row per estimate (value, interval, truth)."""
    arrivals, days, index = case
    day = known(arrivals, days, index)
    seed = _seed(*case)
    truth = realized_truth(day, seed)
    fit = fit_log(generate_log(day, seed), replicates=0)
    estimates = {
        "saves_per_day": fit.saves_per_day,
        "questions_per_day": fit.questions_per_day,
        "zipf_saves": fit.popularity["saves"].exponent,
        "zipf_questions": fit.popularity["questions"].exponent,
        "rank_correlation": fit.rank_correlation,
        "burst_share": fit.burstiness["saves"].share,
        "dispersion": fit.burstiness["saves"].dispersion,
        **{f"mix_{kind}": value for kind, value in fit.mix.items()},
    }
    common = {"arrivals": arrivals, "days": days, "zipf_s": day.zipf_s, "rho": day.rank_correlation}
    rows = [{**common, "estimate": name, "value": e.value, "low": e.low, "high": e.high,
             "truth": truth.get(name, math.nan), "method": e.method} for name, e in estimates.items()]
    first, end = day.hours
    for hour, weight in zip(range(first, end), day.hour_weights, strict=True):
        row = fit.profiles["questions"].hourly.iloc[hour]
        rows.append({**common, "estimate": "questions_per_hour", "value": row["rate"], "low": row["low"],
                     "high": row["high"], "truth": day.questions_per_day * weight, "method": "mean over days"})
    counts = fit.popularity["saves"].counts
    rows.append({**common, "estimate": "zipf_saves_sorted_counts", "value": sorted_counts_mle(counts, day.articles),
                 "low": math.nan, "high": math.nan, "truth": day.zipf_s, "method": "sorted counts"})
    rows.append({**common, "estimate": "zipf_saves_mle", "value": fit.popularity["saves"].mle.value,
                 "low": fit.popularity["saves"].mle.low, "high": fit.popularity["saves"].mle.high,
                 "truth": day.zipf_s, "method": "MLE always"})
    rows.append({**common, "estimate": "flags", "value": math.nan, "low": math.nan, "high": math.nan,
                 "truth": math.nan, "method": "",
                 "bursty": fit.burstiness["saves"].bursty,
                 "far_from_flat": fit.profiles["saves"].far_from_flat or fit.profiles["questions"].far_from_flat,
                 "chose_moment": fit.popularity["saves"].chosen == "moment"})
    return rows


def burst_truth(case: tuple[float, str]) -> dict:
    """The share of saves in bursts and the dispersion index over :data:`TRUTH_DAYS` days of one
    exponent and arrival model (ratios of sums over days, as the fit estimates them)."""
    from kbsim.fit.estimates import day_sums  # the fit's own per-day sums

    s, arrivals = case
    day = replace(BASE, days=TRUTH_DAYS, zipf_s=s, session_saves=ARRIVALS[arrivals])
    log = generate_log(day, 7)
    sums = day_sums(log.saves, log.days, len(log.articles), BURST_WINDOW_S)
    return {"zipf_s": s, "arrivals": arrivals, "burst_share": sums.follows.sum() / sums.totals.sum(),
            "dispersion": sums.chi_square.sum() / sums.dof.sum()}


def gof_study(case: tuple[str, float, int]) -> dict:
    """One 5-day log with the goodness-of-fit test: a true Zipf law (offset 0) or Zipf-Mandelbrot."""
    arrivals, offset, index = case
    day = replace(known(arrivals, 5, index), zipf_offset=offset)
    fit = fit_log(generate_log(day, 900_000 + 1_000 * int(offset) + index + (50_000 if arrivals != "Poisson saves"
                                                                            else 0)), replicates=199)
    return {"arrivals": arrivals, "offset": offset, "saves": fit.popularity["saves"].gof.p_value,
            "questions": fit.popularity["questions"].gof.p_value}


def run_all(studies: int, workers: int, gof_studies: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    cases = [(a, d, i) for a in ARRIVALS for d in DAYS for i in range(studies)]
    truth_cases = [(s, a) for s in EXPONENTS for a in ARRIVALS]
    gof_cases = [(a, q, i) for a in ARRIVALS for q in (0.0, 5.0) for i in range(gof_studies)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        rows = [row for batch in pool.map(study, cases, chunksize=8) for row in batch]
        truths = list(pool.map(burst_truth, truth_cases))
        gof = list(pool.map(gof_study, gof_cases, chunksize=4))
    frame = pd.DataFrame(rows)
    truth = pd.DataFrame(truths)
    for name in ("burst_share", "dispersion"):
        mine = frame["estimate"] == name
        looked = frame[mine].merge(truth[["zipf_s", "arrivals", name]], on=["zipf_s", "arrivals"], how="left")
        frame.loc[mine, "truth"] = looked[name].to_numpy()
    return frame, truth, pd.DataFrame(gof)


def coverage_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per estimate, arrival model and number of days: logs, bias, coverage (NaN without intervals)."""
    rows = frame[frame["estimate"].isin(ESTIMATES)].copy()
    rows["inside"] = (rows["low"] <= rows["truth"]) & (rows["truth"] <= rows["high"])
    rows["has_interval"] = rows["low"].notna() & rows["high"].notna()
    rows["error"] = rows["value"] - rows["truth"]
    grouped = rows.groupby(["estimate", "arrivals", "days"], sort=False)
    out = grouped.apply(lambda g: pd.Series({
        "logs": len(g),
        "bias": g["error"].mean(),
        "sd": g["value"].std() if len(g) > 1 else math.nan,
        "coverage": g.loc[g["has_interval"], "inside"].mean() if g["has_interval"].any() else math.nan,
        "with_interval": g["has_interval"].mean(),
    }), include_groups=False).reset_index()
    return out


def _pct(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.0f}%"


def _signed(value: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(value) else f"{value:+.{digits}f}"


def markdown(frame: pd.DataFrame, truth: pd.DataFrame, gof: pd.DataFrame, args, seconds: float) -> str:
    table = coverage_table(frame)
    lines = [
        "# What `kbsim fit` recovers: bias and coverage on logs of known days",
        "",
        f"Command: `python validation/fit.py --studies {args.studies} --workers {args.workers}`. "
        f"Date: {date.today().isoformat()}. Machine: {platform.system()} {platform.machine()}, Python "
        f"{platform.python_version()}; {seconds:.0f} s.",
        "",
        "Each log comes from known days (`kbsim.fit.synthetic.KnownDays`): 400 articles, 300 saves and 120 questions "
        "a day over 8 flat office hours, the save mix 85/10/5, Zipf exponents 0.6, 0.8, 1.0, 1.2 and 1.4 for both "
        "popularities, rank correlations 0, 0.5, 0.75 and 1, cycled so that each cell pools them equally. Saves come "
        "one by one (Poisson) or in sessions of 3 on average (one article saved again and again, 90 s apart). "
        f"Each cell is {args.studies} logs fitted exactly as `kbsim fit` does; a log's interval is kbsim's, over its "
        "days (a mean or a ratio of sums linearised, or a jackknife for the fitted quantities; t on days - 1). "
        "**Bias** is the mean estimate minus the truth, **coverage** the share of logs whose 95% interval holds "
        "the truth. Target: 93 to 97% for the Zipf exponents and the daily rates with 3 days or more. With "
        f"{args.studies} logs a coverage of 95% is measured to about "
        f"+-{100 * math.sqrt(0.95 * 0.05 / args.studies):.1f} "
        "points (one standard error).",
        "",
    ]
    header = "| estimate | saves | " + " | ".join(f"{d} day{'s' if d > 1 else ''}" for d in DAYS) + " | bias (5 days) |"
    lines += [header, "| --- | --- | " + " | ".join("---:" for _ in DAYS) + " | ---: |"]
    for name, (label, targeted) in ESTIMATES.items():
        for arrivals in ARRIVALS:
            mine = table[(table["estimate"] == name) & (table["arrivals"] == arrivals)].set_index("days")
            cells = []
            for d in DAYS:
                value = mine.loc[d, "coverage"] if d in mine.index else math.nan
                share = mine.loc[d, "with_interval"] if d in mine.index else math.nan
                text = "no interval" if d == 1 or share == 0 else _pct(value)
                if 0 < share < 0.995:
                    text += f" (the {_pct(share)} with one)"
                if targeted and d >= 3 and not math.isnan(value) and not 0.93 <= value <= 0.97:
                    text = f"**{text}**"
                cells.append(text)
            bias = mine.loc[5, "bias"] if 5 in mine.index else math.nan
            digits = 1 if name.endswith("per_day") or name.endswith("per_hour") else 3
            lines.append(f"| {label} | {arrivals.split()[-1]} | " + " | ".join(cells) + f" | {_signed(bias, digits)} |")
    lines += ["", "Bold: a targeted estimate outside 93 to 97% with 3 days or more. \"(the x% with one)\": only "
              "that share of the logs had an interval (bursty saves' cross-day moment has none from 2 days; the "
              "others, not found bursty, took the likelihood).", ""]
    lines += _by_truth(frame)
    lines += _sorted_counts(frame)
    lines += _flags(frame, gof)
    lines += _verdict(table, frame)
    return "\n".join(lines) + "\n"


def _by_truth(frame: pd.DataFrame) -> list[str]:
    rows = frame[frame["days"] >= 3].copy()
    rows["inside"] = (rows["low"] <= rows["truth"]) & (rows["truth"] <= rows["high"])
    out = ["## By true value (3 days or more, both arrival models)", "",
           "| estimate | true value | logs | bias | coverage |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, key in (("zipf_saves", "zipf_s"), ("zipf_questions", "zipf_s"), ("rank_correlation", "rho")):
        for value, group in rows[rows["estimate"] == name].groupby(key):
            out.append(f"| {ESTIMATES[name][0]} | {value:g} | {len(group)} | "
                       f"{_signed((group['value'] - group['truth']).mean())} | {_pct(group['inside'].mean())} |")
    return [*out, ""]


def _sorted_counts(frame: pd.DataFrame) -> list[str]:
    out = ["## Why the likelihood is marginal over the ranking, and why bursty saves take the moment", "",
           "The Zipf exponent of saves three ways, bias by arrival model (all numbers of days pooled, 2 days or more):",
           "", "| saves | sorted-counts fit (textbook) | marginal likelihood (kbsim, always) | "
           "what kbsim fit reports |",
           "| --- | ---: | ---: | ---: |"]
    rows = frame[frame["days"] >= 2]
    for arrivals in ARRIVALS:
        mine = rows[rows["arrivals"] == arrivals]
        biases = []
        for name in ("zipf_saves_sorted_counts", "zipf_saves_mle", "zipf_saves"):
            group = mine[mine["estimate"] == name]
            biases.append(_signed((group["value"] - group["truth"]).mean()))
        out.append(f"| {arrivals.split()[-1]} | " + " | ".join(biases) + " |")
    out += ["", "The sorted-counts fit ranks the articles by their own counts, sorting the counts' noise into the "
            "ranking, and overstates the skew; the marginal likelihood does not, on independent saves. In sessions "
            "a count is a sum of bursts, which the likelihood (taking saves to be independent) reads as more skew; "
            "the cross-day moment (pairs of days, which bursts within a day cannot inflate) is what `kbsim fit` "
            "uses when it finds the saves bursty.", ""]
    return out


def _flags(frame: pd.DataFrame, gof: pd.DataFrame) -> list[str]:
    flags = frame[frame["estimate"] == "flags"]
    out = ["## The verdicts: bursts, profile, goodness of fit", "", "| | Poisson saves | saves in sessions |",
           "| --- | ---: | ---: |"]
    for label, column, days in (("called bursty, 2 days or more", "bursty", 2),
                                ("Zipf exponent of saves from the cross-day moment, 2 days or more", "chose_moment", 2),
                                ("profile called far from flat (it is flat), 2 days or more", "far_from_flat", 2)):
        cells = []
        for arrivals in ARRIVALS:
            mine = flags[(flags["arrivals"] == arrivals) & (flags["days"] >= days)]
            cells.append(_pct(mine[column].astype(float).mean()))
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    for offset, label in ((0.0, "goodness of fit rejects a true Zipf law at 5% (size), 5 days"),
                          (5.0, "goodness of fit rejects a Zipf-Mandelbrot law, (rank + 5)^-s (power), 5 days")):
        cells = []
        for arrivals in ARRIVALS:
            mine = gof[(gof["arrivals"] == arrivals) & (gof["offset"] == offset)]
            rejected = pd.concat([mine["saves"], mine["questions"]]) < 0.05
            cells.append(f"{_pct(rejected.mean())} of {len(rejected)}")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    size = {a: (pd.concat([g["saves"], g["questions"]]) < 0.05).mean()
            for a, g in gof[gof["offset"] == 0.0].groupby("arrivals")}
    out += ["", "The goodness-of-fit replicates are not refitted, which should make the test conservative. On "
            f"independent saves it rejected a true law {_pct(size.get('Poisson saves', math.nan))} of the time. On "
            "bursty saves the replicates keep the log's runs of saves of one article, and two sessions of a popular "
            "article within 5 minutes of each other make one run, given to one drawn article, so the replicates "
            "are not quite the law's; the test rejected a true law "
            f"{_pct(size.get('saves in sessions', math.nan))} of the time (the saves' and the questions' tests "
            "counted together). A bursty log is replayed whatever the test says, so nothing the config holds turns on "
            "it; a p-value just under 0.05 there is weak evidence. The flat days called far from flat in sessions "
            "are days whose sessions began near the end of the office hours and ran on into the next hour, which "
            "the active window then includes at a fraction of the others' rate.", ""]
    return out


def _verdict(table: pd.DataFrame, frame: pd.DataFrame) -> list[str]:
    targeted = [name for name, (_, t) in ESTIMATES.items() if t]
    rows = table[table["estimate"].isin(targeted) & (table["days"] >= 3)]
    missed = rows[(rows["coverage"] < 0.93) | (rows["coverage"] > 0.97)]
    out = ["## Verdict", ""]
    pooled = rows["coverage"].mean()
    out.append(f"Pooled over the targeted estimates with 3 days or more, coverage is {_pct(pooled)} "
               f"(lowest {_pct(rows['coverage'].min())}, highest {_pct(rows['coverage'].max())}).")
    if missed.empty:
        out.append("Every targeted cell is within 93 to 97%.")
    else:
        cells = "; ".join(f"{ESTIMATES[r['estimate']][0]}, {r['arrivals']}, {r['days']} days: {_pct(r['coverage'])}"
                          for _, r in missed.iterrows())
        studies = int(rows["logs"].iloc[0])
        two_se = 2 * math.sqrt(0.95 * 0.05 / studies)
        far = missed[(missed["coverage"] - 0.95).abs() > two_se]
        out.append(f"Outside 93 to 97%: {cells}. " + (
            f"Each is within two standard errors ({100 * two_se:.1f} points at {studies} logs) of 95%, so the "
            "measurement does not tell them from intervals that hold exactly; those above 97% err on the "
            "side of caution." if far.empty else
            "Those more than two standard errors from 95% are real departures."))
    rho = table[(table["estimate"] == "rank_correlation") & (table["days"] >= 3)]
    out += ["", f"The rank correlation (not targeted) covers {_pct(rho['coverage'].min())} to "
            f"{_pct(rho['coverage'].max())} with 3 days or more. Where it is 1 its interval is cut at 1, the "
            "copula's end, so an estimate just under 1 with a narrow interval misses it (the table by true value "
            "gives the coverage at each)."]
    two = table[table["estimate"].isin(targeted) & (table["days"] == 2)]
    flags = frame[(frame["estimate"] == "flags") & (frame["days"] == 2) & (frame["arrivals"] == "saves in sessions")]
    found = flags["bursty"].astype(float).mean()
    out += ["", f"With 2 days the targeted estimates cover {_pct(two['coverage'].min())} to "
            f"{_pct(two['coverage'].max())}. The daily rates and the questions' exponent hold already (t on 1 "
            "degree of freedom makes their intervals wide); the saves' exponent in sessions does not. From 2 days "
            f"the burst test finds only {_pct(found)} of the session logs bursty (the paired ratio's interval, on "
            "1 degree of freedom, is wide); the others take the likelihood, which the bursts bias, and "
            "those found bursty take the cross-day moment, which has no interval from 2 days (leaving one out "
            "leaves no pair of days). So bursty saves' exponent holds from 3 days. "
            "With 1 day nothing has an interval: the spread between days is what every interval rests on, and one "
            "day does not show it (`kbsim fit` says so)."]
    return [*out, ""]


def _day_kinds_section(path: Path) -> str:
    """The section validation/fit_day_kinds.py wrote into the page (kept when this script rewrites it)."""
    start, end = "<!-- day-kinds:start", "<!-- day-kinds:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if start not in text or end not in text:
        return ""
    return start + text.split(start, 1)[1].split(end, 1)[0] + end + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=int, default=200, help="logs per arrival model and number of days (200)")
    parser.add_argument("--gof-studies", type=int, default=60, help="logs per case of the goodness-of-fit test (60)")
    parser.add_argument("--workers", type=int, default=2, help="processes (2)")
    parser.add_argument("--out", default=str(Path(__file__).with_name("FIT.md")), help="where to write (FIT.md)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    frame, truth, gof = run_all(args.studies, args.workers, args.gof_studies)
    text = markdown(frame, truth, gof, args, time.perf_counter() - started)
    kept = _day_kinds_section(Path(args.out))
    Path(args.out).write_text(text + (("\n" + kept) if kept else ""), encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
