"""``kbsim fit SAVES [QUESTIONS]``: estimate a day from your own logs, and write it as a config.

Reads a log of saves (and one of questions: what the agent was asked about, the article
it cited) in any format :mod:`kbsim.fit.logs` knows, prints each estimate with its 95%
interval over the log's days and the method that made it, says where the analytic
model's assumptions fail, and with ``--write-config`` writes an experiment that
``kbsim run``, ``kbsim advise --config`` and ``kbsim serve --config`` take
(:mod:`kbsim.fit.fitted_config`). ``--figure`` draws the rank-frequency curves against the
fitted law, and the hourly profile.

Exit codes: 0 fitted; 2 a bad log (the file, line and column named) or option, or a
config that exists (without ``--force``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

EPILOG = """\
examples:
  kbsim fit examples/helpdesk-log/saves.csv examples/helpdesk-log/questions.csv --corpus kbsim:sample \\
            --write-config my-day.yaml --figure fit.png
  kbsim fit trace/saves.csv trace/questions.csv --articles 400            # what kbsim trace export wrote
  kbsim fit edits.csv --articles 2000 --time-column changed_at --article-column page --kind-column action \\
            --timezone Europe/Berlin
  kbsim fit kb.db --articles 400 --json                                    # the event log kbsim serve --db kept
"""


def register(subparsers) -> None:
    """Add ``kbsim fit`` to the command line."""
    from kbsim.cli import command_help
    from kbsim.cli.config_args import add_quiet_argument

    parser = subparsers.add_parser(
        "fit",
        help=command_help("fit"),
        description="Estimate a day from logs of saves (and questions): saves and questions per day, the hourly "
        "profile, the Zipf exponent of each popularity (maximum likelihood over ranks, the number of articles "
        "known) and its goodness of fit, the rank correlation between them, the save mix and how bursty the saves "
        "are, each with a 95% interval over the log's days. --write-config writes an experiment that kbsim run, "
        "kbsim advise --config and kbsim serve --config take.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("saves", metavar="SAVES",
                        help="the log of saves: CSV (kbsim's trace or any, see --*-column), JSONL, JSON "
                             "(poll_resource_events pages) or a kbsim serve --db SQLite file")
    parser.add_argument("questions", metavar="QUESTIONS", nargs="?",
                        help="the log of questions: time and the article asked about (cited)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--articles", metavar="N", help="articles in the knowledge base (the Zipf fit needs it)")
    size.add_argument("--corpus", metavar="PATH",
                      help="your articles (a folder, .jsonl, .csv or kbsim:sample): their number, and the ids or "
                           "titles the logs name them by")
    read = parser.add_argument_group("reading the logs")
    read.add_argument("--time-column", default="time", metavar="NAME", help="column of the time (time)")
    read.add_argument("--article-column", default="article", metavar="NAME", help="column of the article (article)")
    read.add_argument("--kind-column", default="kind", metavar="NAME",
                      help="column of a save's kind: content, content_and_title, unpublish or a synonym (kind)")
    read.add_argument("--timezone", metavar="TZ",
                      help="count days and hours in this zone (Europe/Berlin, UTC, +01:00); default: each time's "
                           "own offset")
    read.add_argument("--day-start", metavar="ISO",
                      help="what times given in seconds count from (default 2026-01-05T09:00:00Z, kbsim's)")
    read.add_argument("--kb-id", default="kb-1", metavar="ID", help="the knowledge base of a SQLite event log (kb-1)")
    read.add_argument("--burst-window", default="5min", metavar="DURATION",
                      help="a save this soon after one of the same article is part of a burst (5min)")
    out = parser.add_argument_group("output")
    out.add_argument("--write-config", metavar="YAML", help="write the fitted day as an experiment config")
    out.add_argument("--force", action="store_true", help="overwrite the config (and its traces) if they exist")
    out.add_argument("--figure", metavar="FILE", help="draw the rank-frequency curves and the profile (.png/.svg/.pdf)")
    out.add_argument("--json", action="store_true", help="print the fit as JSON")
    add_quiet_argument(out)
    parser.set_defaults(func=run)


def _error(message: str) -> int:
    print(f"kbsim fit: error: {message}", file=sys.stderr)
    return 2


def read_and_fit(args):
    """The log the arguments name, and its fit (raises InputError, FitInputError, AdviceError)."""
    from datetime import datetime

    from kbsim.cli.advise_options import duration_option
    from kbsim.fit import Columns, FitInputError, fit_log, read_log
    from kbsim.fit.logs import parse_timezone
    from kbsim.store import DAY_START

    articles = None
    if getattr(args, "articles", None) is not None:
        text = str(args.articles).replace(",", "").replace("_", "").strip()
        if not text.isdigit():
            raise FitInputError("--articles", f"expected a whole number of articles, got {args.articles!r}")
        articles = int(text)
        from kbsim.fit.estimates import REPLICATES, max_articles

        if articles > max_articles():
            raise FitInputError("--articles", f"{articles:,} articles is more than a fit can hold on this machine (its "
                                f"goodness-of-fit test keeps {REPLICATES} logs of every article's count); at most "
                                f"{max_articles():,}")
    day_start = DAY_START
    if getattr(args, "day_start", None):
        try:
            day_start = datetime.fromisoformat(args.day_start)
        except ValueError:
            raise FitInputError("--day-start", f"expected an ISO 8601 time, got {args.day_start!r}") from None
        if day_start.tzinfo is None:
            raise FitInputError("--day-start", f"{args.day_start!r} has no time zone; add Z or an offset")
    window_s = duration_option(getattr(args, "burst_window", "5min"), "--burst-window")
    columns = Columns(getattr(args, "time_column", "time"), getattr(args, "article_column", "article"),
                      getattr(args, "kind_column", "kind"))
    log = read_log(args.saves, args.questions, articles=articles, corpus=getattr(args, "corpus", None),
                   columns=columns, tz=parse_timezone(getattr(args, "timezone", None)), day_start=day_start,
                   kb_id=getattr(args, "kb_id", "kb-1"))
    return log, fit_log(log, window_s=window_s)


def run(args) -> int:
    """Fit the logs, print the estimates (or ``--json``), and write the config and figure asked for."""
    from kbsim.files import FileWriteError
    from kbsim.fit import FitInputError
    from kbsim.inputs import InputError
    from kbsim.model.advise import AdviceError

    if args.write_config and not args.force:
        target = Path(args.write_config)
        traces = target.parent / f"{target.stem}-traces"
        for existing in (target, traces):
            if existing.exists():
                return _error(f"--write-config: {existing} exists; choose another file or pass --force")
    if args.write_config and Path(args.write_config).suffix.lower() not in (".yaml", ".yml"):
        return _error(f"--write-config: expected a .yaml file name, got {args.write_config!r}")
    if args.figure and Path(args.figure).suffix.lower() not in (".png", ".svg", ".pdf"):
        return _error(f"--figure: expected a .png, .svg or .pdf file name, got {args.figure!r}")
    if args.figure:  # before the fit, so that nothing is printed or written when the figure cannot be drawn
        from kbsim.extras import require

        require("plots", "matplotlib", "kbsim fit --figure")  # kbsim.cli.main reports it, in one form
    try:
        log, fit = read_and_fit(args)
    except (InputError, FitInputError, AdviceError) as exc:
        return _error(str(exc))
    except MemoryError:
        return _error("out of memory: the log, or the number of articles, is more than this machine can fit")
    output = fit.to_dict()
    if not args.json:
        print("\n".join(fit.lines(notes=not args.quiet)), flush=True)
    if args.write_config:
        from kbsim.fit.fitted_config import write_config

        command = "kbsim fit " + " ".join(shlex.quote(part) for part in sys.argv[2:]) if len(sys.argv) > 2 \
            else "kbsim fit"
        try:
            written = write_config(fit, args.write_config, command=command)
        except FileWriteError as exc:
            return _error(f"--write-config: {exc.path}: {exc.strerror}")
        except OSError as exc:
            return _error(f"--write-config: {exc.filename or args.write_config}: {exc.strerror or exc}")
        output["config"] = {"path": str(written.path), "replays_log": written.replay,
                            "traces": [str(p) for p in written.traces], "popularity": str(written.popularity),
                            "dropped_saves": written.dropped_saves}
        if written.warning:  # on stderr, whatever --quiet or --json: the replay is not the whole log
            print(f"kbsim fit: warning: {written.warning}", file=sys.stderr, flush=True)
        if not args.json:
            how = (f"replays the log ({log.days} days as {log.days} scenarios, traces in "
                   f"{written.path.parent / (written.path.stem + '-traces')})" if written.replay
                   else "the synthetic day of the fitted numbers")
            print(f"Wrote {written.path}: {how}; every article's counts in {written.popularity}.")
            if not args.quiet:
                print(f"  kbsim run {written.path}    kbsim advise --config {written.path} --max-latency 15min")
    if args.figure:
        from kbsim.report.plots import fit_rank_frequency, save_as

        caption = (f"kbsim fit {Path(args.saves).name}" + (f" {Path(args.questions).name}" if args.questions else "")
                   + f": {log.days} days, {log.n_articles:,} articles; bands: 5-95% of logs drawn from the fitted law "
                   "(bursts kept), and 95% intervals over days.")
        try:
            path = save_as(fit_rank_frequency(fit.rank_frequency(), fit.hourly_profile(), caption), args.figure)
        except FileWriteError as exc:
            return _error(f"--figure: {exc.path}: {exc.strerror}")
        except OSError as exc:
            return _error(f"--figure: {exc.filename or args.figure}: {exc.strerror or exc}")
        output["figure"] = str(path)
        if not args.json:
            print(f"Drew {path}.")
    if args.json:
        print(json.dumps(output, indent=2, allow_nan=False))
    return 0
