"""Hash every table of a set of days, to prove a speed change leaves every result identical.

Usage: python benchmarks/fingerprint_days.py [--write FILE | --check FILE]

Runs ``run_day`` for seeds 1..6, edit delays None/5/60/600/3600, save popularity Zipf and
uniform, plus one 10x-scaled day (seed 1) and a few variants (a retention window, replaced articles,
the sample corpus from files, other check settings, the design switches: several agents, a lossy
wire, citations without versions, blind overwrites), and prints one SHA-256 per day over every returned
table (``pd.util.hash_pandas_object`` of the rows, the column names and dtypes). ``--write``
records them; ``--check`` compares against a recorded file and exits 1 on any difference.

``benchmarks/fingerprints.json`` holds the hashes recorded from the code before the speed work
of issue 16 (pandas 3.1.1, numpy 2.4.6): a change meant to leave results alone must keep every
one. The hashes depend on pandas' hashing and dtypes, so after upgrading pandas re-record them
from a commit known to be right (``--write``) before comparing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import pandas as pd

from kbsim.params import DayParams
from kbsim.sim import run_day

SEEDS = range(1, 7)
DELAYS = (None, 5, 60, 600, 3600)
POPULARITY = ("zipf", "uniform")


def table_digest(tables: dict[str, pd.DataFrame]) -> str:
    digest = hashlib.sha256()
    for name in sorted(tables):
        frame = tables[name]
        digest.update(name.encode())
        digest.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
        digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return digest.hexdigest()


def days():
    for popularity in POPULARITY:
        for seed in SEEDS:
            for delay in DELAYS:
                saves = {} if popularity == "zipf" else {"popularity": "uniform"}
                yield f"{popularity} seed={seed} delay={delay}", DayParams(saves=saves, edit={"delay_s": delay}), seed
    reference = DayParams()
    scaled = DayParams.model_validate(
        {
            "corpus": {"articles": reference.corpus.articles * 10},
            "questions": {"count": reference.questions.count * 10},
            "saves": {"count": reference.saves.count * 10},
        }
    )
    yield "scale=10x seed=1", scaled, 1
    # beyond the reference days: the other paths a speed change could touch
    extras = {
        "retention=1800 (cursor expiry)": {"event_retention_s": 1800, "edit": {"delay_s": 60}},
        "replace_unpublished": {"saves": {"replace_unpublished": True}, "edit": {"delay_s": 600}},
        "sample corpus": {"corpus": {"source": "kbsim:sample"}, "edit": {"delay_s": 60}},
        "title_search_limit=2, checks every 600 s": {"checks": {"title_search_limit": 2, "interval_s": 600}},
        "poisson arrivals, exponential delays": {
            "arrivals": "poisson", "edit": {"delay_s": 300, "delay_distribution": "exponential"}
        },
    }
    # the design switches (issue 27: several agents, a lossy wire, no versions, no unpublish
    # events, blind overwrites), added after the scale work of issue 28 found the days above
    # never run them; recorded from the code before that work
    extras |= {
        "3 agents, lossy, no versions, no unpublish events": {
            "day_hours": 3, "corpus": {"articles": 60}, "saves": {"count": 90}, "questions": {"count": 40},
            "edit": {"delay_s": 30, "share": 1.0}, "agents": {"count": 3}, "citation": {"carries_version": False},
            "transport": {"loss_rate": 0.2}, "events": {"log_unpublish": False},
        },
        "blind overwrites and no idempotency keys, lossy": {
            "day_hours": 2, "corpus": {"articles": 40}, "saves": {"count": 60}, "questions": {"count": 30},
            "edit": {"delay_s": 60, "share": 0.5, "compare_and_swap": False, "idempotency_key": False},
            "transport": {"loss_rate": 0.3},
        },
        "2 agents on the sample corpus, lossy": {
            "day_hours": 2, "corpus": {"source": "kbsim:sample"}, "agents": {"count": 2},
            "transport": {"loss_rate": 0.1}, "edit": {"delay_s": 120},
        },
        "2 agents on 2,000 articles (the arena index), lossy": {
            "day_hours": 2, "corpus": {"articles": 2000}, "saves": {"count": 1500}, "questions": {"count": 300},
            "agents": {"count": 2}, "transport": {"loss_rate": 0.1}, "edit": {"delay_s": 120},
            "checks": {"interval_s": 600},
        },
    }
    for label, overrides in extras.items():
        for seed in (1, 2):
            yield f"{label} seed={seed}", DayParams.model_validate(overrides), seed


def fingerprints() -> dict[str, str]:
    return {label: table_digest(run_day(params, seed)) for label, params, seed in days()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write")
    group.add_argument("--check")
    args = parser.parse_args()
    found = fingerprints()
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            json.dump(found, f, indent=1)
        print(f"{len(found)} fingerprints written to {args.write}")
        return 0
    if args.check:
        with open(args.check, encoding="utf-8") as f:
            recorded = json.load(f)
        differ = [label for label in recorded if recorded[label] != found.get(label)]
        print(f"{len(recorded) - len(differ)}/{len(recorded)} days identical")
        for label in differ:
            print("DIFFERS:", label)
        return 1 if differ or recorded.keys() != found.keys() else 0
    for label, digest in found.items():
        print(digest, label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
