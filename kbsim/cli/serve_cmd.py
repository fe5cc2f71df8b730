"""``kbsim serve``: serve a simulated knowledge base to MCP clients over stdio or Streamable HTTP."""

from __future__ import annotations

import argparse
import logging
import sys


def register(subparsers) -> None:
    """Add the ``kbsim serve`` parser to ``subparsers``, handled by :func:`run`."""
    from kbsim.cli import command_help
    from kbsim.serve.server import DEFAULT_BUSY_TIMEOUT_S, DEFAULT_KB_ID, DEFAULT_SEED, DEFAULT_SPEED, MAX_SPEED

    parser = subparsers.add_parser(
        "serve",
        help=command_help("serve"),
        description=(
            "Serve a knowledge base as an MCP server over stdio, or over Streamable HTTP with "
            "--http: the shipped sample help desk, your own articles (--corpus), or the synthetic "
            "corpus. Over stdio, stdout carries the protocol; logs go to stderr. Needs the "
            "'serve' extra (pip install 'kbsim[serve]')."
        ),
    )
    parser.add_argument("--corpus", metavar="PATH",
                        help="the articles to serve: a folder of .md/.txt files, a .jsonl or a .csv "
                             "file, 'kbsim:sample', 'kbsim:sample-de', 'kbsim:sample-hi' or 'synthetic' "
                             "(default: the config's corpus, or the shipped sample help desk)")
    parser.add_argument("--language", metavar="CODE",
                        help="the corpus's language (en, de, hi, fr, es, ja, zh, ...; 'und' for none in "
                             "particular): search with the Unicode analyzer and that language's stop words "
                             "and stemmer; 'auto': each article's language from its script and stop words "
                             "(default: the corpus's own, as the German and Hindi samples declare, else auto)")
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
    parser.add_argument("--admin-tools", action="store_true",
                        help="also serve two admin tools, publish_knowledge_article and "
                             "unpublish_knowledge_article (off by default, never listed otherwise): "
                             "what kbsim drive needs to run people's unpublishes against this server")
    parser.add_argument("--live", action="store_true",
                        help="people keep saving articles while serving (accelerated time)")
    parser.add_argument("--speed", type=float, default=DEFAULT_SPEED,
                        help="simulated seconds per wall-clock second, > 0 and at most "
                             f"{MAX_SPEED:g} (default {DEFAULT_SPEED:g}: a simulated minute "
                             "per second)")
    parser.add_argument("--busy-timeout", default=f"{DEFAULT_BUSY_TIMEOUT_S:g}",
                        metavar="SECONDS",
                        help="with --db: how long a write waits for another process's lock "
                             "before the call gets the retryable tool error 'busy': seconds, or "
                             f"a duration with its unit (2s, 1min; default {DEFAULT_BUSY_TIMEOUT_S:g} s)")
    parser.add_argument("--http", metavar="[HOST:]PORT",
                        help="serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio "
                             "(HOST default 127.0.0.1; PORT 0: a free port, printed at start); "
                             "Host and Origin headers are checked (DNS-rebinding protection)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="with --http: allow a HOST that is not a loopback address (there is "
                             "no authentication: whoever reaches the port can read and edit)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME[:PORT]",
                        help="with --http: also accept this Host header (repeatable), e.g. the "
                             "name remote clients reach the server by")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                        help="with --http: also accept requests from this browser Origin "
                             "(repeatable), e.g. http://localhost:5173")
    parser.add_argument("--log-level", default="INFO",
                        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                        help="stderr log level (default INFO)")
    parser.set_defaults(func=run, error_prefix="kbsim serve: ")


def run(args: argparse.Namespace) -> int:
    """Serve the knowledge base over stdio or Streamable HTTP until stopped; the exit status."""
    from kbsim.cli.day_config import load_day
    from kbsim.extras import require
    from kbsim.params import DayParams
    from kbsim.serve.server import (
        ServeConfigError,
        check_busy_timeout,
        check_served,
        check_speed,
        serve,
        serve_stdio,
        served_corpus,
    )
    from kbsim.units import parse_duration

    require("serve", "mcp", "kbsim serve")  # before anything is read: names the extra

    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    try:
        check_served(args.seed, args.kb_id, args.grant)
        check_speed(args.speed)
        try:  # SECONDS: a bare number is seconds, and a unit may be given
            busy_timeout_s = parse_duration(args.busy_timeout)
        except ValueError as exc:
            raise ServeConfigError(f"--busy-timeout: {exc}") from None
        check_busy_timeout(busy_timeout_s)
        if args.http is None:
            given = [name for name, value in (("--allow-remote", args.allow_remote),
                                              ("--allow-host", args.allow_host),
                                              ("--allow-origin", args.allow_origin)) if value]
            if given:
                raise ServeConfigError(f"{given[0]} needs --http (stdio has no hosts or origins)")
        transport = serve_stdio if args.http is None else _http_transport(args)
        params = DayParams() if args.config is None else load_day(args.config)
        params = served_corpus(params, args.corpus, args.language)
        serve(params, seed=args.seed, db=args.db, kb_id=args.kb_id, grants=args.grant,
              live=args.live, speed=args.speed, busy_timeout_s=busy_timeout_s,
              corpus_given=args.corpus is not None or args.language is not None,
              admin_tools=args.admin_tools, transport=transport)
    except KeyboardInterrupt:
        return 130
    return 0


def _http_transport(args: argparse.Namespace):
    """``--http`` and its options as a transport for :func:`kbsim.serve.server.serve`."""
    import functools

    from kbsim.serve.http import parse_http_address, run_http
    from kbsim.serve.server import ServeConfigError

    address = parse_http_address(args.http, allow_remote=args.allow_remote)
    for host in args.allow_host:
        if _bad_host(host):
            raise ServeConfigError(
                f"--allow-host {host!r}: expected the name clients reach the server by, as a Host "
                "header carries it: NAME[:PORT] with a name that is not empty, e.g. kb.internal or "
                "kb.internal:8000"
            )
    for origin in args.allow_origin:
        scheme, _, host = origin.partition("://")
        if scheme not in ("http", "https") or _bad_host(host):
            raise ServeConfigError(
                f"--allow-origin {origin!r}: expected an origin as a browser sends it, "
                "scheme://host[:port] with a host and no path, e.g. http://localhost:5173"
            )
    return functools.partial(
        run_http, address=address, allow_hosts=args.allow_host, allow_origins=args.allow_origin,
        on_listening=lambda url: print(f"kbsim serve: listening on {url}", file=sys.stderr, flush=True),
    )


def _bad_host(host: str) -> bool:
    """Whether ``host`` (NAME[:PORT], as a Host header or an origin carries it) has no name, or
    holds what no host does (a space, a path, a user): the SDK would compare headers with it."""
    name, _, port = host.rpartition(":")
    name = (name if port.isdigit() else host).strip("[]")
    return not name.strip() or any(character.isspace() or character in "/?#@," for character in host)
