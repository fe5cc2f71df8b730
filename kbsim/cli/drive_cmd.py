"""``kbsim drive``: run a day in real time against a live knowledge-base MCP server, and
``kbsim drive-report``: set driven days beside the model."""

from __future__ import annotations

import argparse
import json
import sys

SAFETY = ("A driven day edits the server's knowledge base (people's saves and the agent's edits): "
          "drive a staging copy, never production.")


def register(subparsers) -> None:
    """Add ``kbsim drive`` to the command line (``kbsim drive-report`` is
    :mod:`kbsim.cli.drive_report_cmd`)."""
    from kbsim.cli import command_help
    from kbsim.drive.client import DEFAULT_CALL_TIMEOUT_S
    from kbsim.drive.day import DEFAULT_MAX_LAG_S, DEFAULT_MAX_LATE, DEFAULT_SAMPLE_ARTICLES

    parser = subparsers.add_parser(
        "drive",
        help=command_help("drive"),
        description=(
            "Run a simulated day's people, questions, checks and agent edits in real time against a "
            "live MCP server, through the official MCP client: by Streamable HTTP (--url) or a stdio "
            "command (after --). Writes the day's history (every call) and its tables, beside the same "
            f"day simulated in process. {SAFETY}"
        ),
        epilog="example: kbsim drive --url http://127.0.0.1:8765/mcp --corpus synthetic --seed 1 "
               "--out drive/seed-1 --yes-edit-this-server",
    )
    parser.add_argument("--url", help="the server's Streamable HTTP endpoint (http://HOST:PORT/mcp)")
    parser.add_argument("--header-env", action="append", default=[], metavar="HEADER=ENV_VARIABLE",
                        help="send HTTP header HEADER with the value of environment variable ENV_VARIABLE "
                             "(repeatable), e.g. Authorization=KB_TOKEN; the value is never printed or written")
    parser.add_argument("--corpus", required=True, metavar="PATH",
                        help="the articles the server holds, with their own ids: a folder of .md/.txt files, a "
                             ".jsonl or .csv file, 'kbsim:sample', 'kbsim:sample-de', 'kbsim:sample-hi' or "
                             "'synthetic' (the seed's synthetic corpus); a sample is read and compared first")
    parser.add_argument("--language", metavar="CODE", help="the corpus's language, as kbsim serve takes it")
    parser.add_argument("--config", metavar="CONFIG", help="YAML file of day parameters (as kbsim serve --config)")
    parser.add_argument("--seed", type=int, default=1, help="the day's seed (default 1)")
    parser.add_argument("--out", required=True, metavar="DIR", help="a new folder for the day's history")
    parser.add_argument("--speed", type=float, default=60.0,
                        help="simulated seconds per wall second (default 60: an 8-hour day in 8 minutes)")
    parser.add_argument("--max-calls-per-second", type=float, metavar="N",
                        help="never start more than N calls a second (default: no bound)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_CALL_TIMEOUT_S, metavar="SECONDS",
                        help=f"a call unanswered this long stops the day (default {DEFAULT_CALL_TIMEOUT_S:g} s)")
    parser.add_argument("--max-lag", type=float, default=DEFAULT_MAX_LAG_S, metavar="SECONDS",
                        help="an event starting this many wall seconds after its time is late "
                             f"(default {DEFAULT_MAX_LAG_S:g})")
    parser.add_argument("--max-late", type=int, default=DEFAULT_MAX_LATE, metavar="N",
                        help=f"stop the day after N late events (default {DEFAULT_MAX_LATE})")
    parser.add_argument("--sample-articles", type=int, default=DEFAULT_SAMPLE_ARTICLES, metavar="N",
                        help=f"articles read and compared with the corpus first (default {DEFAULT_SAMPLE_ARTICLES})")
    parser.add_argument("--field-map", metavar="FILE",
                        help="YAML mapping kbsim's roles to the server's result fields (docs/drive.md)")
    parser.add_argument("--kb-id", default="kb-1", help="the knowledge base id on the server (default kb-1)")
    parser.add_argument("--yes-edit-this-server", action="store_true",
                        help="required: you accept that the day edits this server's knowledge base")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="after --: the command that serves MCP over stdio, e.g. -- kbsim serve --corpus synthetic")
    parser.set_defaults(func=run, error_prefix="kbsim drive: ")


def _options(args: argparse.Namespace):
    from kbsim.drive.client import DriveError
    from kbsim.drive.day import DriveOptions
    from kbsim.drive.remote import FieldMap

    if not (args.speed > 0 and args.speed <= 100_000):
        raise DriveError(f"--speed {args.speed:g}: expected simulated seconds per wall second, > 0 and at most 100000")
    if not args.timeout > 0:
        raise DriveError(f"--timeout {args.timeout:g}: expected seconds > 0")
    if args.max_calls_per_second is not None and not args.max_calls_per_second > 0:
        raise DriveError(f"--max-calls-per-second {args.max_calls_per_second:g}: expected a number > 0")
    if not args.max_lag > 0:
        raise DriveError(f"--max-lag {args.max_lag:g}: expected seconds > 0")
    if args.max_late < 0:
        raise DriveError(f"--max-late {args.max_late}: expected a count >= 0")
    if not 1 <= args.sample_articles <= 10_000:
        raise DriveError(f"--sample-articles {args.sample_articles}: expected 1 to 10000")
    field_map = FieldMap()
    if args.field_map is not None:
        field_map = _field_map(args.field_map)
    return DriveOptions(speed=args.speed, timeout_s=args.timeout, max_calls_per_second=args.max_calls_per_second,
                        max_lag_s=args.max_lag, max_late=args.max_late, sample_articles=args.sample_articles,
                        field_map=field_map, kb_id=args.kb_id, corpus_name=args.corpus)


def _field_map(path: str):
    import yaml

    from kbsim.drive.client import DriveError
    from kbsim.drive.remote import FieldMap
    from kbsim.errors import first_problem
    from kbsim.files import FileReadError, read_regular

    try:
        data = yaml.safe_load(read_regular(path, 1 << 20))
    except FileReadError as exc:
        raise DriveError(f"--field-map {exc}") from None
    except yaml.YAMLError:
        raise DriveError(f"--field-map {path}: not YAML") from None
    try:
        return FieldMap.model_validate(data or {})
    except ValueError as exc:
        raise DriveError(f"--field-map {path}: {first_problem(exc)}") from None


def _address(args: argparse.Namespace):
    from kbsim.drive.client import DriveError, ServerAddress

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.url is not None and command:
        raise DriveError("give either --url URL or -- COMMAND ARGS, not both")
    if args.url is not None:
        return ServerAddress.http(args.url, args.header_env)
    if args.header_env:
        raise DriveError("--header-env needs --url (a stdio server has no HTTP headers)")
    if not command:
        raise DriveError("no server: give --url URL or -- COMMAND ARGS")
    return ServerAddress.stdio(command)


def _plan_lines(plan: dict) -> list[str]:
    kinds = ", ".join(f"{n} {k}" for k, n in plan["saves_by_kind"].items())
    return [
        f"plan: a {plan['day_hours']:g}-hour day in {plan['wall_minutes']:.1f} min wall: "
        f"{plan['saves']} people's saves ({kinds}), {plan['questions']} questions, "
        f"{plan['agent_edits']} agent edits, {plan['check_calls']} check calls; "
        f"about {plan['calls']} calls, {plan['calls_per_hour']:.0f} per simulated hour",
    ]


def run(args: argparse.Namespace) -> int:
    """``kbsim drive``: print the plan, refuse without the safety flag, drive the day."""
    from pathlib import Path

    from kbsim.cli.day_config import load_day
    from kbsim.drive.client import DriveError
    from kbsim.drive.day import day_plan, drive_day
    from kbsim.extras import require
    from kbsim.params import DayParams
    from kbsim.serve.server import served_corpus
    from kbsim.sim.day import prepared, simulate_day
    from kbsim.sim.world import starting_knowledge_base

    require("serve", "mcp", "kbsim drive")
    options = _options(args)
    address = _address(args)
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DriveError(f"--out {out}: exists and is not an empty folder; give a new folder")
    params = DayParams() if args.config is None else load_day(args.config)
    params = served_corpus(params, args.corpus, args.language)
    params = prepared(params, starting_knowledge_base(params.corpus, args.seed))
    tables, _ = simulate_day(params, args.seed, checked=True)
    print(f"kbsim drive: {address.shown()} ({address.transport}), knowledge base {args.kb_id}, seed {args.seed}, "
          f"--speed {options.speed:g}", file=sys.stderr)
    for line in _plan_lines(day_plan(params, tables, options.speed)):
        print(f"kbsim drive: {line}", file=sys.stderr)
    if not args.yes_edit_this_server:
        raise DriveError(f"refusing to start without --yes-edit-this-server. {SAFETY}")

    def ready(report: dict) -> None:
        if report["without_unpublishes"]:
            print("kbsim drive: the server has no admin tools (publish/unpublish): the day runs without "
                  "unpublishes (they become content saves, in the model too)", file=sys.stderr)
        print(f"kbsim drive: server checked ({report['corpus_sampled']} articles match the corpus; one probe "
              "per tool); the day starts", file=sys.stderr, flush=True)

    try:
        result = drive_day(address, params, args.seed, out, options, on_ready=ready)
    except KeyboardInterrupt:
        print("kbsim drive: interrupted before the day started; nothing written", file=sys.stderr)
        return 130
    late = result.report["lateness"]
    print(f"kbsim drive: {result.calls} calls in {result.report['wall_s']:.1f} s wall; events late by p50 "
          f"{late['lag_p50_s']:.2f} s, p99 {late['lag_p99_s']:.2f} s, worst {late['lag_max_s']:.2f} s "
          f"({late['late_events']} beyond {late['max_lag_s']:g} s); history in {out}", file=sys.stderr)
    if result.report["foreign_versions"]:
        print(f"kbsim drive: {result.report['foreign_versions']} reads found a version the driver did not write: "
              "someone else is editing this server", file=sys.stderr)
    if result.complete:
        return 0
    print(f"kbsim drive: stopped ({result.stopped_because}): {result.message}; the partial history is kept in "
          f"{out} and never counted as a day", file=sys.stderr)
    return 130 if result.stopped_because == "interrupted" else 2


def run_report(args: argparse.Namespace) -> int:
    """``kbsim drive-report``: the page "your server against the model"."""
    from kbsim.drive.compare import against_model, model_page
    from kbsim.files import atomic_write_text

    table, notes = against_model(args.histories)
    page = model_page(table, notes, command=args.command or "kbsim drive-report " + " ".join(args.histories))
    if args.out is None:
        sys.stdout.write(page)
    else:
        atomic_write_text(args.out, page)
        print(json.dumps({"wrote": args.out, "days": notes["days"]}), file=sys.stderr)
    return 0
