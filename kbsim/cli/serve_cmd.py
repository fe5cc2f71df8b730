"""``kbsim serve``: serve a simulated knowledge base to MCP clients over stdio."""

from __future__ import annotations

import argparse
import logging
import sys


def register(subparsers) -> None:
    from kbsim.serve.server import DEFAULT_BUSY_TIMEOUT_S, DEFAULT_KB_ID, DEFAULT_SEED, DEFAULT_SPEED, MAX_SPEED

    parser = subparsers.add_parser(
        "serve",
        help="serve the knowledge base as a stdio MCP server (the four tools)",
        description=(
            "Serve a knowledge base as an MCP server over stdio: the shipped sample help desk, "
            "your own articles (--corpus), or the synthetic corpus. stdout carries the protocol; "
            "logs go to stderr."
        ),
    )
    parser.add_argument("--corpus", metavar="PATH",
                        help="the articles to serve: a folder of .md/.txt files, a .jsonl or a .csv "
                             "file, 'kbsim:sample' or 'synthetic' (default: the config's corpus, or "
                             "the shipped sample help desk)")
    parser.add_argument("--config", metavar="CONFIG",
                        help="YAML file of day parameters, nested or dotted as in a config's "
                             "params (corpus.articles, saves.count, zipf_s, ...), or an experiment "
                             "config (its params: the day kbsim fit --write-config wrote, say)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help=f"seed of the corpus and of people's saves (default {DEFAULT_SEED})")
    parser.add_argument("--db", metavar="PATH",
                        help="serve a SQLite store at PATH (created and filled on first use)")
    parser.add_argument("--kb-id", default=DEFAULT_KB_ID,
                        help=f"id of the served knowledge base (default {DEFAULT_KB_ID})")
    parser.add_argument("--grant", action="append", metavar="KB_ID",
                        help="a knowledge base id the agent may use (repeatable; "
                             "default: the served one)")
    parser.add_argument("--live", action="store_true",
                        help="people keep saving articles while serving (accelerated time)")
    parser.add_argument("--speed", type=float, default=DEFAULT_SPEED,
                        help="simulated seconds per wall-clock second, > 0 and at most "
                             f"{MAX_SPEED:g} (default {DEFAULT_SPEED:g}: a simulated minute "
                             "per second)")
    parser.add_argument("--busy-timeout", type=float, default=DEFAULT_BUSY_TIMEOUT_S,
                        metavar="SECONDS",
                        help="with --db: how long a write waits for another process's lock "
                             "before the call gets the retryable tool error 'busy' (default "
                             f"{DEFAULT_BUSY_TIMEOUT_S:g})")
    parser.add_argument("--log-level", default="INFO",
                        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                        help="stderr log level (default INFO)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kbsim.cli.day_config import load_day
    from kbsim.experiment.config import ConfigError
    from kbsim.params import DayParams
    from kbsim.serve.server import ServeConfigError, check_busy_timeout, check_speed, serve, served_corpus

    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    try:
        check_speed(args.speed)
        check_busy_timeout(args.busy_timeout)
        params = DayParams() if args.config is None else load_day(args.config)
        params = served_corpus(params, args.corpus)
        serve(params, seed=args.seed, db=args.db, kb_id=args.kb_id, grants=args.grant,
              live=args.live, speed=args.speed, busy_timeout_s=args.busy_timeout)
    except (ServeConfigError, ConfigError) as exc:
        print(f"kbsim serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0
