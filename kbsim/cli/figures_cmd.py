"""``kbsim figures [--only NAME] [--quick] [--out DIR]``: run what is missing, then draw every figure.

Exit codes: 0 done; 2 a bad argument or config, or a results or figures folder that
cannot be used (read-only, damaged, a full disk), with one line naming the path;
1 a run failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

EPILOG = """\
examples:
  kbsim figures                      # the full study (cached results are reused)
  kbsim figures --quick              # a few seeds, thinned sweeps, into results/quick/
  kbsim figures --only edit_rejections --only check_cost
  kbsim figures --out study/         # outside a checkout: study/results, figures, docs
"""


def register(subparsers) -> None:
    """Add the ``kbsim figures`` parser to ``subparsers``, handled by :func:`run`."""
    from kbsim.cli import command_help
    from kbsim.cli.config_args import add_quiet_argument
    from kbsim.report.figures import FIGURE_NAMES

    parser = subparsers.add_parser(
        "figures",
        help=command_help("figures"),
        description="Run every experiment the figures need (missing runs only: results are cached "
        "under RESULTS/<experiment>/), then write FIGURES/<name>.png and .svg, FIGURES/README.md "
        "and the reference study's table DOCS.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=FIGURE_NAMES,
        metavar="NAME",
        help=f"draw only this figure (repeatable): {', '.join(FIGURE_NAMES)}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="few seeds and thinned sweeps (also KBSIM_QUICK=1), results under RESULTS/quick/",
    )
    parser.add_argument(
        "--out",
        default=".",
        metavar="DIR",
        help="the folder the defaults below are in (default: the current folder): "
        "DIR/results, DIR/figures, DIR/docs/results.md, DIR/docs/reproduction.md, and "
        "DIR/README.md's results block when DIR holds a README.md with one",
    )
    parser.add_argument(
        "--experiments",
        default=None,
        metavar="DIR",
        help="the experiment configs (default: the ones kbsim ships, experiments/)",
    )
    parser.add_argument("--results", default=None, metavar="DIR", help="default: OUT/results")
    parser.add_argument(
        "--figures",
        default=None,
        metavar="DIR",
        help="default: OUT/figures (RESULTS/quick/figures with --quick)",
    )
    parser.add_argument(
        "--docs",
        default=None,
        metavar="FILE",
        help="the results table written with a full set (default: OUT/docs/results.md; "
        "not written with --quick unless given)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes for missing runs (default: CPU count)",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="discard the figures' experiment results and run them anew",
    )
    add_quiet_argument(parser)
    parser.set_defaults(func=run, error_prefix="kbsim figures: ")


def _readme_with_results(path: Path) -> Path | None:
    """``path`` if it is a README with the results block ``kbsim figures`` rewrites, else None."""
    from kbsim.report.pages import README_START

    try:
        return path if README_START in path.read_text(encoding="utf-8") else None
    except (OSError, UnicodeDecodeError):
        return None


def run(args) -> int:
    """Run the missing results, then draw the figures and write the pages; the exit status."""
    from kbsim.errors import UsageError
    from kbsim.extras import require
    from kbsim.report.build import build_figures
    from kbsim.report.experiments import quick_from_env
    from kbsim.runner.shipped import SHIPPED_DIR

    started = time.perf_counter()
    quick = args.quick or quick_from_env()
    out = Path(args.out)
    results_dir = args.results or str(out / "results")
    # quick figures never overwrite the full study's figures or results table
    figures_dir = args.figures or (f"{results_dir}/quick/figures" if quick else str(out / "figures"))
    docs = args.docs or (None if quick else str(out / "docs" / "results.md"))
    try:
        require("plots", "matplotlib", "kbsim figures")
        written = build_figures(
            args.only,
            quick=quick,
            experiments_dir=args.experiments or SHIPPED_DIR,
            results_dir=results_dir,
            figures_dir=figures_dir,
            docs_path=docs,
            readme_path=None if (quick or args.docs) else _readme_with_results(out / "README.md"),
            reproduction_path=None if (quick or args.docs) else out / "docs" / "reproduction.md",
            workers=args.workers,
            fresh=args.fresh,
            log=None if args.quiet else (lambda line: print(line, file=sys.stderr)),
            progress=not args.quiet,
        )
    except UsageError:  # a bad config or results folder: reported by kbsim.cli.main
        raise
    except (FileNotFoundError, KeyError, ValueError) as error:
        print(f"kbsim figures: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # e.g. a read-only figures folder
        print(f"kbsim figures: {error.filename or figures_dir}: {error.strerror or error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"kbsim figures: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    if not args.quiet:
        print(
            f"kbsim figures: {len(written)} files in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
    return 0
