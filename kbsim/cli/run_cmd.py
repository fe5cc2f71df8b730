"""``kbsim run CONFIG`` (alias ``kbsim sweep``): run an experiment config, resumably.

Exit codes: 0 all runs done; 1 some runs failed (recorded under
``errors/``; rerun to retry them); 2 a bad config, an experiment above the size
limits without ``--yes``, or a results folder that cannot be used (in use, read-only,
a full disk, a file in the way), with one line naming the path; 3 ``--precision``
reached ``--max-seeds`` before every target (the results so far are kept);
128 + signal number when interrupted (completed runs are kept; rerun the same
command to resume).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

EPILOG = """\
examples:
  kbsim run reference                # a shipped experiment, by name (kbsim experiments)
  kbsim run my-study.yaml            # or a config file of your own
  kbsim run zipf_sweep --workers 8 --set saves.count=500
  kbsim sweep zipf_sweep --executor dask --scheduler tcp://10.0.0.5:8786
  kbsim run reference --seeds 3 --set checks.interval_s=30min --out /tmp/results   # seeds 1, 2 and 3
  kbsim run reference --seed 7 --quiet   # seed 7 alone, without notes or warnings
  kbsim run reference --seeds 1-200   # extends the results: the config's seeds 1-20 are reused
  kbsim run reference --precision stale_citation_share@end=0.02 --max-seeds 320
"""


def register(subparsers) -> None:
    """Add the ``kbsim run`` parser to ``subparsers``, handled by :func:`run`."""
    from kbsim.cli import command_help
    from kbsim.cli.config_args import add_config_arguments, add_quiet_argument

    parser = subparsers.add_parser(
        "run",
        aliases=["sweep"],
        help=command_help("run"),
        description="Run every scenario x sweep point x seed of CONFIG that is not done yet, "
        "write each run's tables as Parquet under OUT/<experiment>/, then summarise all runs "
        "into summary.csv and print it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "config",
        metavar="CONFIG",
        help="a shipped experiment's name (kbsim experiments lists them) or an experiment YAML file",
    )
    parser.add_argument("--out", default="results", metavar="DIR", help="default: results")
    add_config_arguments(parser)
    parser.add_argument(
        "--executor",
        choices=("local", "dask"),
        default=None,
        help="local process pool (default) or Dask",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes (local) or LocalCluster workers (dask); default: CPU count",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="an existing Dask scheduler, e.g. tcp://host:8786 (implies --executor dask)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=None, metavar="N", help="runs per task (default: auto)"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="discard this experiment's previous results first"
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="run an experiment above the size limits (the estimate is printed otherwise)",
    )
    parser.add_argument(
        "--precision",
        action="append",
        default=[],
        metavar="NAME=HALF_WIDTH",
        help="add seeds (doubling) until this metric's 95%% interval has at most this half-width "
        "at every point, e.g. stale_citation_share@end=0.02 or =2%%; repeatable",
    )
    parser.add_argument(
        "--max-seeds",
        type=int,
        default=None,
        metavar="N",
        help="the most seeds --precision may reach (default 640)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_quiet_argument(parser)
    parser.set_defaults(func=run, error_prefix=ERROR_PREFIX)


#: How a line reporting an error starts (kbsim.cli.main prints an escaping UsageError so).
ERROR_PREFIX = "kbsim run: error: "


def _error(message: str) -> int:
    print(f"{ERROR_PREFIX}{message}", file=sys.stderr)
    return 2


def run(args) -> int:
    """Run the config's missing runs and print its summary; the exit status."""
    from kbsim.cli.config_args import config_from_args
    from kbsim.errors import UsageError
    from kbsim.extras import require
    from kbsim.report.text_tables import format_contrasts, format_summary, seed_warnings
    from kbsim.runner.precision import DEFAULT_MAX_SEEDS, PrecisionTarget, run_until_precise
    from kbsim.runner.run import Interrupted, RunsFailedError, run_experiment
    from kbsim.runner.shipped import experiment_path

    if args.scheduler and args.executor == "local":
        return _error("--scheduler needs --executor dask")
    for name in ("workers", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            return _error(f"--{name.replace('_', '-')}: expected at least 1, got {value}")
    if args.max_seeds is not None and not args.precision:
        return _error("--max-seeds needs --precision")
    executor = args.executor or ("dask" if args.scheduler else "local")
    if executor == "dask":
        require("dask", "distributed", "--executor dask")  # a MissingExtraError is reported by kbsim.cli.main
    args.config = str(experiment_path(args.config))
    targets = [PrecisionTarget.parse(text) for text in args.precision]
    if args.max_seeds is not None and args.max_seeds < 1:
        return _error(f"--max-seeds: expected at least 1, got {args.max_seeds}")
    if args.scheduler:
        from kbsim.runner.executors import check_scheduler_address

        check_scheduler_address(args.scheduler)
    config = config_from_args(args)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def note(message: str) -> None:  # progress, notes and warnings: what --quiet silences
        if not args.quiet:
            log(message)

    for line in [*config.notes, *_sized_notes(config)]:
        note(line)

    def run_once(config, fresh: bool = args.fresh):
        try:
            return _run_experiment(config, fresh)
        except RunsFailedError as exc:  # reported below as any failed runs are: exit 1
            return exc.result

    def _run_experiment(config, fresh: bool):
        return run_experiment(
            config,
            args.out,
            executor=executor,
            workers=args.workers,
            scheduler=args.scheduler,
            fresh=fresh,
            progress=not (args.no_progress or args.quiet),
            batch_size=args.batch_size,
            log=note,
            yes=args.yes,
        )

    keys = ["scenario", *config.swept]
    precision = None
    try:
        if targets:
            batches = iter([args.fresh])  # --fresh discards once, before the first batch
            precision = run_until_precise(
                config,
                targets,
                lambda batch: run_once(batch, fresh=next(batches, False)),
                keys,
                max_seeds=DEFAULT_MAX_SEEDS if args.max_seeds is None else args.max_seeds,
                log=note,
            )
            result = precision.result
        else:
            result = run_once(config)
    except OSError as exc:  # reading the results folder failed in a way kbsim did not foresee
        if isinstance(exc, UsageError):  # SchedulerUnavailable: reported by kbsim.cli.main
            raise
        return _error(f"{exc.filename or args.out}: {exc.strerror or exc}")
    except Interrupted as exc:
        log(f"interrupted by {exc}: completed runs are saved; rerun the same command to resume")
        return 128 + exc.signum
    except KeyboardInterrupt:
        log("interrupted: completed runs are saved; rerun the same command to resume")
        return 130

    if not result.summary.empty:
        table = format_summary(result.summary, keys)
        contrasts = format_contrasts(result.contrasts, keys)
        try:
            print(table, flush=True)
            if contrasts:
                print("\ncontrasts (paired on common seeds; contrasts.csv):\n" + contrasts, flush=True)
        except BrokenPipeError:  # e.g. piped into head: the results are on disk regardless
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (silence the exit-time flush)
    note(
        "headline metrics: value [95% interval over seeds]; every metric, per hour too, is in summary.csv"
    )
    for line in seed_warnings(result.summary):
        note(line)
    note(
        f"{result.runs_total} runs ({result.runs_reused} reused, {result.runs_computed} computed, "
        f"{len(result.failures)} failed) in {result.wall_time_s:.1f} s with {result.executor} "
        f"x{result.workers}; results in {result.directory}"
    )
    if result.failures:
        for failure in result.failures[:20]:
            where = f"{failure.run_id} {failure.scenario} {failure.point} seed={failure.seed}"
            log(f"  failed {where}: {failure.error}")
        if len(result.failures) > 20:
            log(f"  ... and {len(result.failures) - 20} more")
        log(f"tracebacks: {result.directory / 'errors'}/<run_id>.json; rerun to retry them")
        return 1
    if precision is not None:
        return _report_precision(precision, keys, log)
    return 0


def _report_precision(precision, keys: list[str], log) -> int:
    """Seeds each point needed for each target; exit 3 when the cap came first."""
    from kbsim.report.text_tables import point_label

    for row in precision.needed.to_dict("records"):
        if math.isnan(row["value"]):
            needed = "undefined here (no trials)"
        elif math.isnan(row["seeds_needed"]):
            needed = "not reached"
        else:
            needed = f"{int(row['seeds_needed'])} seeds"
        log(
            f"precision: {row['name']} at {point_label(row, keys)}: +-{row['half_width']:.4g} "
            f"(target {row['target']:.4g}): {needed}"
        )
    batches = " -> ".join(str(n) for n in precision.batches)
    if precision.met:
        log(f"precision: every target met with {precision.seeds} seeds (batches {batches})")
        return 0
    log(
        f"{ERROR_PREFIX}--precision: targets not met with {precision.seeds} seeds, the --max-seeds cap "
        f"(batches {batches}); raise --max-seeds or relax the half-width"
    )
    return 3


def _sized_notes(config) -> list[str]:
    """One line per corpus from files whose day the config leaves to be sized: the counts
    of saves and questions it resolves to (kbsim.params.DayParams.sized_to)."""
    from kbsim.inputs import InputError, load_corpus

    notes: dict[tuple, str] = {}
    for _, _, params in config.points():
        if params.corpus.source is None:
            continue
        try:
            articles = len(load_corpus(params.corpus.source))
        except InputError:
            continue  # refused with its file, line and field when the runs are listed
        sized = params.sized_to(articles)
        if sized is not params:
            key = (params.corpus.source, sized.saves.count, sized.questions.count)
            notes[key] = (f"{params.corpus.source}: {articles:,} articles, so {sized.saves.count:,} saves and "
                          f"{sized.questions.count:,} questions a day (the reference day's 0.75 and 0.3 per "
                          "article; set saves.count and questions.count to choose)")
    return list(notes.values())
