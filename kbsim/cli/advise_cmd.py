"""``kbsim advise``: what should my agent do? A check policy and an edit delay for your day.

The answer comes from the analytic model (:mod:`kbsim.model.advise`) and is instant;
``--verify`` simulates the advised days through the normal runner and prints the
simulated values with 95% intervals beside the predictions.

Exit codes: 0 answered; 2 a bad or impossible input (one line naming the option), or a
verification above the size limits without ``--yes``; 1 some verification runs failed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from typing import Any

from kbsim.cli import advise_day
from kbsim.cli.advise_options import number_option, share_option, target_and_options

#: Seeds per scenario of --verify when --seeds is not given.
VERIFY_SEEDS = "20"

EPILOG = """\
examples:
  kbsim advise --max-latency 15min            # the reference day: 400 articles, 300 saves, 120 questions
  kbsim advise --articles 20000 --saves-per-day 3000 --questions-per-day 5000 --zipf 1.0 \\
               --max-latency 15min
  kbsim advise --max-exposure 2% --cost bytes --json
  kbsim advise --max-latency 15min --verify --seeds 10 --out results
  kbsim advise --config my-day.yaml --max-latency 15min   # the day kbsim fit wrote; simulated if need be
  kbsim advise --trace saves.csv questions.csv --articles 2000 --max-exposure 2%
"""


def register(subparsers) -> None:
    """Add the ``kbsim advise`` parser to ``subparsers``, handled by :func:`run`."""
    from kbsim.cli import command_help
    from kbsim.cli.config_args import add_quiet_argument

    parser = subparsers.add_parser(
        "advise",
        help=command_help("advise"),
        description="Answer from the analytic model, instantly: the cheapest exact strategy (re-read or "
        "poll) and check interval meeting a detection-latency or stale-exposure target, with its calls "
        "and bytes per hour; the runner-up; what the title check would miss; and the largest delay "
        "between reading and editing an article that keeps version conflicts under a target. "
        "--verify simulates it. Defaults are the reference day.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # A value that starts with a minus and a digit is a value, never an option (Python 3.13's own
    # rule), so ``--max-latency -5min`` reaches the duration check ("expected a positive
    # duration") instead of argparse's "expected one argument". advise has no option like -5.
    parser._negative_number_matcher = re.compile(r"^-\.?\d")
    day = parser.add_argument_group("your day (defaults: the reference day)")
    day.add_argument("--articles", default="400", metavar="N", help="articles in the knowledge base (400)")
    day.add_argument("--saves-per-day", default="300", metavar="N", help="saves by people per day (300)")
    day.add_argument("--questions-per-day", default="120", metavar="N", help="questions the agent answers (120)")
    day.add_argument("--zipf", default="0.9", metavar="S", help="Zipf exponent of popularity, 0 = uniform (0.9)")
    day.add_argument("--day-hours", default="8", metavar="H", help="length of the day in hours (8)")
    day.add_argument("--citations-per-answer", default="2", metavar="N", help="citations kept per answer (2)")
    day.add_argument(
        "--saves-popularity",
        choices=("zipf", "uniform"),
        default="zipf",
        help="whether people edit the popular articles (zipf) or all alike (uniform)",
    )
    advise_day.add_arguments(parser)
    target = parser.add_argument_group("the target (one of)").add_mutually_exclusive_group(required=True)
    target.add_argument("--max-latency", metavar="DURATION", help="detection latency at most this, e.g. 15min")
    target.add_argument(
        "--max-exposure", metavar="SHARE", help="stale exposure (citation-time stale and unflagged) at most, e.g. 2%%"
    )
    parser.add_argument(
        "--latency-statistic",
        choices=("mean", "p90"),
        default="mean",
        help="which detection latency --max-latency bounds (mean)",
    )
    parser.add_argument("--cost", choices=("calls", "bytes"), default="calls", help="what cheapest means (calls)")
    parser.add_argument(
        "--min-interval", default="1min", metavar="DURATION", help="the shortest check interval to consider (1min)"
    )
    parser.add_argument(
        "--max-conflicts", default="5%", metavar="SHARE", help="version-conflict rate the edit delay keeps under (5%%)"
    )
    parser.add_argument("--edit-share", default="25%", metavar="SHARE", help="share of answers followed by an edit")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    verify = parser.add_argument_group("verification by simulation")
    verify.add_argument("--verify", action="store_true", help="simulate the advised days and compare")
    verify.add_argument(
        "--seeds",
        default=None,
        metavar="N",
        help="how many seeds (simulated days) per scenario: N means seeds 1 to N (default 20 with --verify; "
        "with --config or --trace, 1 per day of a log and 5 of a synthetic day)",
    )
    verify.add_argument(
        "--seed", default=None, metavar="N",
        help="simulate this one seed alone (--config or --trace; --verify's intervals need --seeds 2 or more)",
    )
    verify.add_argument(
        "--out", default=None, metavar="DIR",
        help="results go to DIR/advise-<hash>/ (default: results; with --config or --trace, kbsim's cache folder, "
             "$XDG_CACHE_HOME/kbsim/advise or ~/.cache/kbsim/advise, named in the output)"
    )
    verify.add_argument("--workers", default=None, metavar="N", help="processes (default: CPU count)")
    verify.add_argument("--yes", action="store_true", help="run a verification above kbsim's size limits")
    add_quiet_argument(parser)
    parser.set_defaults(func=run, error_prefix="kbsim advise: error: ")


def _question(args):
    """The day, target and options from the arguments (AdviceError naming a bad one)."""
    from kbsim.model import advise
    from kbsim.model.advise import AdviceError

    if getattr(args, "design_day", None) is not None:
        raise AdviceError("--design-day", "applies only with --config or --trace (a day from a log, which has kinds "
                          "of day and hours)")
    params = advise.day_params(
        articles=number_option(args.articles, "--articles", True),
        saves_per_day=number_option(args.saves_per_day, "--saves-per-day", True),
        questions_per_day=number_option(args.questions_per_day, "--questions-per-day", True),
        zipf=number_option(args.zipf, "--zipf", False),
        day_hours=number_option(args.day_hours, "--day-hours", False),
        citations_per_answer=number_option(args.citations_per_answer, "--citations-per-answer", True),
        saves_popularity=args.saves_popularity,
        edit_share=share_option(args.edit_share, "--edit-share", allow_all=True),
    )
    target, options = target_and_options(args)
    from kbsim.cli.config_args import exclusive_seeds

    exclusive_seeds(args)
    if args.seed is not None and args.verify:
        raise AdviceError("--seed", "--verify sets the model beside 95% intervals over seeds, which need at least "
                          "2 seeds; give --seeds N (N from 2), or --config/--trace to simulate one seed")
    seeds = number_option(VERIFY_SEEDS if args.seeds is None else args.seeds, "--seeds", True)
    if not 2 <= seeds <= 1000:
        raise AdviceError("--seeds", f"expected 2 to 1000 (an interval needs at least two days), got {seeds}")
    workers = None if args.workers is None else number_option(args.workers, "--workers", True)
    if workers is not None and workers < 1:
        raise AdviceError("--workers", f"expected at least 1, got {workers}")
    return params, target, options, seeds, workers


def run(args) -> int:
    """Print the advised check policy and edit delay (and, with ``--verify``, the simulated values); the exit status."""
    from kbsim.model import advise

    if advise_day.given(args):  # a config or a log gives the day
        return advise_day.run(args)
    params, target, options, seeds, workers = _question(args)
    answer = advise.advise(params, target, **options)
    p = params
    day_line = (
        f"Day: {p.corpus.articles:,} articles, {p.saves.count:,} saves ({p.saves.popularity}) and "
        f"{p.questions.count:,} questions per {p.day_hours:g}-hour day, Zipf s = {p.zipf_s:g}. "
        "Predicted by the analytic model (kbsim.model.analytic)."
    )
    output: dict[str, Any] = {"advice": answer.to_dict()}
    if not args.json:
        print("\n".join([day_line, *answer.lines()]), flush=True)
    code = 0
    if args.verify:
        code, verified = _verify(answer, seeds, args.out or "results", workers, args.yes, as_json=args.json,
                                 quiet=args.quiet)
        output["verify"] = verified
    if args.json:
        print(json.dumps(output, indent=2, allow_nan=False))
    return code


def _verify(answer, seeds: int, out: str, workers: int | None, yes: bool, as_json: bool,
            quiet: bool) -> tuple[int, dict | None]:
    """Simulate ``answer``'s days and set them beside it (printed unless ``as_json``); ``quiet``
    drops the estimate, the progress bar and the runner's notes, never an error."""
    from kbsim.model import advise
    from kbsim.runner.config import ConfigError
    from kbsim.runner.load import config_from_dict
    from kbsim.runner.run import ResultsError, TooLargeError, run_experiment
    from kbsim.units import format_duration

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def note(message: str) -> None:
        if not quiet:
            log(message)

    try:
        config = config_from_dict(advise.verify_config(answer, seeds))
    except ConfigError as error:  # a day the simulation cannot hold (kbsim.runner.limits)
        log(f"kbsim advise: error: --verify: {error.problem}")
        return 2, None
    estimate = config.estimate()
    workers = workers or os.cpu_count() or 1
    wall = format_duration(estimate.cpu_s / min(workers, estimate.runs), "estimate")
    note(
        f"Verifying: {estimate}; roughly {wall} "
        f"with {workers} worker{'s' if workers > 1 else ''} (days checked every few minutes take longer). "
        f"Results in {out}/{config.name}/ (reused when you ask again)."
    )
    try:
        result = run_experiment(config, out, workers=workers, progress=not (as_json or quiet), log=note, yes=yes)
    except TooLargeError as error:
        log(f"kbsim advise: error: --verify: {error.problem}")
        log("  (the answer above is the model's; lower --seeds, or pass --yes to simulate anyway)")
        return 2, None
    except (ConfigError, ResultsError) as error:
        log(f"kbsim advise: error: --verify: {error}")
        return 2, None
    except OSError as error:
        log(f"kbsim advise: error: --out: {error.filename or out}: {error.strerror or error}")
        return 2, None
    if result.failures:
        log(f"kbsim advise: {len(result.failures)} runs failed; see {result.directory}/errors")
        return 1, None
    frame = advise.compare(answer, result.summary)
    if not as_json:
        print(
            f"\nSimulated ({len(config.seeds)} seeds per day, {result.runs_total} days, "
            f"{result.wall_time_s:.0f} s; 95% intervals over seeds):",
            flush=True,
        )
        print("\n".join(advise.comparison_lines(frame)), flush=True)
    records = [
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
        for row in frame.to_dict("records")
    ]
    scored = [r for r in records if r["agrees"] is not None]
    return 0, {
        "directory": str(result.directory),
        "seeds": len(config.seeds),
        "runs": result.runs_total,
        "quantities": records,
        "agree": sum(1 for r in scored if r["agrees"]),
        "scored": len(scored),
    }
