"""``kbsim advise --config day.yaml`` and ``kbsim advise --trace SAVES [QUESTIONS]``: advice for
that day, by simulation where the analytic model does not hold.

The day is a config (an experiment such as ``kbsim fit --write-config`` writes, or a file
of day parameters) or a log of your own (fitted on the spot, its config written under
``--out``). The analytic model answers first, from the day's numbers. When the day is
not what the model assumes (:meth:`kbsim.fit.Fit.model_gaps`: bursty saves, a profile
far from flat, a Zipf law that does not fit, saves that follow the questions' ranking
only in part), the answer says so and is found again by simulating the day
(:mod:`kbsim.runner.simulated_advice`), with where the model and the simulation
disagree. ``--verify`` simulates even when the model holds.

The simulation is kept small for a laptop: one seed per day of a replayed log (the log's
days are the replications; seeds change only the text people write and the agent's
choices), five seeds of a synthetic day, unless ``--seeds N`` (seeds 1 to N) or ``--seed N``
(that seed alone) says otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kbsim.cli.advise_options import share_option, target_and_options

if TYPE_CHECKING:
    from kbsim.fit import Fit

#: Simulated days per day of a replayed log, and of a synthetic day, when --seeds is not given.
LOG_SEEDS = 1
SYNTHETIC_SEEDS = 5
#: The day flags that --config and --trace replace (--articles stays: a trace does not say it).
_DAY_FLAGS = {"saves_per_day": "300", "questions_per_day": "120", "zipf": "0.9", "day_hours": "8",
              "citations_per_answer": "2", "saves_popularity": "zipf"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--config`` and ``--trace`` to ``kbsim advise``."""
    group = parser.add_argument_group("your day from a config or a log (instead of the numbers above)")
    source = group.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="CONFIG",
                        help="an experiment config (kbsim fit --write-config writes one) or a file of day parameters")
    source.add_argument("--trace", nargs="+", metavar="FILE",
                        help="SAVES [QUESTIONS]: your logs (any format kbsim fit reads), fitted on the spot; "
                             "--articles says how many articles the knowledge base holds")
    group.add_argument("--design-day", metavar="DAY", default=None,
                       help="the day to answer for: busiest (the busiest kind of day, default), weekday, weekend, "
                            "peak, ordinary, or a percentile of the log's days by saves (p90, 90%%); the answer "
                            "holds in that day's busy hours")


def given(args: argparse.Namespace) -> bool:
    """Whether the arguments give the day by ``--config`` or ``--trace``."""
    return bool(getattr(args, "config", None) or getattr(args, "trace", None))


def _error(message: str) -> int:
    print(f"kbsim advise: error: {message}", file=sys.stderr)
    return 2


def _question(args):
    """Target and options from the arguments (AdviceError naming a bad one)."""
    from kbsim.model.advise import AdviceError

    target, options = target_and_options(args)
    edit_share = share_option(args.edit_share, "--edit-share", allow_all=True)
    from kbsim.cli.config_args import exclusive_seeds, one_seed

    exclusive_seeds(args)
    seeds: int | list[int] | None = None
    if args.seed is not None:
        seeds = [one_seed(args.seed)]
    elif args.seeds is not None:
        text = str(args.seeds).strip()
        if not text.isdigit() or not 1 <= int(text) <= 1000:
            raise AdviceError("--seeds", f"expected 1 to 1000 simulated days per day, got {args.seeds!r}")
        seeds = int(text)
    workers = None
    if args.workers is not None:
        text = str(args.workers).strip()
        if not text.isdigit() or int(text) < 1:
            raise AdviceError("--workers", f"expected at least 1, got {args.workers!r}")
        workers = int(text)
    return target, options, edit_share, seeds, workers


def _articles(args) -> int:
    from kbsim.model.advise import AdviceError

    text = str(args.articles).replace(",", "").replace("_", "").strip()
    if not text.isdigit() or int(text) < 3:
        raise AdviceError("--articles", f"expected a whole number of articles (at least 3), got {args.articles!r}")
    return int(text)


def _fitted_config(args, out: str) -> tuple[Path, Fit]:
    """Fit ``--trace``'s logs and write their config under ``out``; returns its path and the fit."""
    from kbsim.cli.fit_cmd import read_and_fit
    from kbsim.fit.fitted_config import write_config
    from kbsim.model.advise import AdviceError

    if len(args.trace) > 2:
        raise AdviceError("--trace", f"expected SAVES [QUESTIONS], got {len(args.trace)} files")
    saves, questions = args.trace[0], (args.trace[1] if len(args.trace) == 2 else None)
    namespace = argparse.Namespace(saves=saves, questions=questions, articles=str(_articles(args)))
    log, fit = read_and_fit(namespace)
    digest = hashlib.sha256()
    for path in args.trace:
        digest.update(Path(path).read_bytes())
    digest.update(str(log.n_articles).encode())
    folder = Path(out) / f"advise-fit-{digest.hexdigest()[:10]}"
    written = write_config(fit, folder / "day.yaml", command="kbsim advise --trace " + " ".join(args.trace))
    if written.warning:
        print(f"kbsim advise: warning: {written.warning}", file=sys.stderr, flush=True)
    return written.path, fit


def _day_of(config) -> tuple[dict, dict]:
    """``(params, scenarios)`` of a loaded experiment config, nested."""
    return dict(config.params), {name: dict(body) for name, body in config.scenarios.items()}


def _load(path: str):
    """The experiment config at ``path`` (or one made of a file of day parameters): one day,
    its scenarios being the days of a log."""
    from kbsim.cli.day_config import load_day_config
    from kbsim.runner.config import ConfigError

    config = load_day_config(path)
    if config.sweep:
        raise ConfigError(path, "sweep", "kbsim advise --config takes one day (its scenarios may be the days of a "
                          "log); this config sweeps " + ", ".join(config.sweep))
    return config


def run(args: argparse.Namespace) -> int:
    """Advise for the day a config or a log gives; simulate it where the analytic model does not hold."""
    from kbsim.fit import FitInputError
    from kbsim.fit.design_day import design_lines, design_model_day, parse_design_day
    from kbsim.fit.from_config import model_day, replayed_fit, synthetic_gaps
    from kbsim.inputs import InputError
    from kbsim.model import advise
    from kbsim.model.advise import AdviceError, pooled_lines
    from kbsim.runner.config import ConfigError
    from kbsim.runner.results import ResultsError
    from kbsim.runner.run import TooLargeError
    from kbsim.runner.simulated_advice import EDIT_DELAYS_S, simulate_advice

    changed = [flag for flag, default in _DAY_FLAGS.items() if str(getattr(args, flag)) != default]
    if changed:
        option = "--config" if args.config else "--trace"
        return _error(f"--{changed[0].replace('_', '-')}: does not apply with {option}, which gives the day")
    from kbsim.files import cache_dir

    # nothing is written into the current folder unless asked (--out): the fitted config and the
    # simulated runs are kept in the cache folder, named in the output, and reused from there
    out = args.out if args.out is not None else str(cache_dir() / "advise")
    try:
        target, options, edit_share, seeds, workers = _question(args)
        fit = None
        if args.trace:
            path, fit = _fitted_config(args, out)
            origin = f"your log ({', '.join(args.trace)}), fitted; its config: {path}"
        else:
            path = Path(args.config)
            origin = str(path)
        choice = parse_design_day(args.design_day)
        config = _load(str(path))
        params, scenarios = _day_of(config)
        if fit is None:
            fit = replayed_fit(params, scenarios, str(path))
        pooled_day = model_day(params, fit)
        pooled_day = pooled_day.model_copy(update={"edit": pooled_day.edit.model_copy(update={"share": edit_share})})
        design, day, design_scenarios = design_model_day(fit, params, scenarios, choice, pooled_day, edit_share)
        answer = advise.advise(day, target, **options)
        pooled = advise.advise(pooled_day, target, **options) if design is not None else None
    except (AdviceError, InputError, FitInputError, ConfigError) as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"{exc.filename}: {exc.strerror}")
    gaps = fit.model_gaps() if fit is not None else synthetic_gaps(day)
    replayed = fit is not None and any("trace" in json.dumps(body) for body in scenarios.values())
    p = day
    output: dict = {"day": {"source": origin, **({"days": len(scenarios)} if replayed else {})},
                    "model_gaps": gaps, "advice": answer.to_dict()}
    if design is not None and pooled is not None:
        output["design_day"] = design.to_dict()
        output["pooled_advice"] = pooled.to_dict()
    if not args.json:
        if design is not None:
            from kbsim.fit.day_kinds import kind_of_scenario

            kinds = [name for name in scenarios if kind_of_scenario(name) == name]
            print(f"Day: {origin}" + (f", {len(scenarios)} days of a log replayed" if replayed else
                                      f", {len(kinds)} kinds of day ({', '.join(kinds)})" if kinds else "") + ".")
            print("\n".join(design_lines(design, p)))
        else:
            print(f"Day: {origin}: {p.corpus.articles:,} articles, {p.saves.count:,} saves and {p.questions.count:,} "
                  f"questions per {p.day_hours:g}-hour day, Zipf s = {p.zipf_s:.3g}"
                  + (f", {len(scenarios)} days of a log replayed" if replayed else "") + ".")
        print("Predicted by the analytic model (kbsim.model.analytic):", flush=True)
        print("\n".join(answer.lines()), flush=True)
        if design is not None and pooled is not None:
            print("\n".join(pooled_lines(pooled, answer, fit.log.days if fit is not None else None)), flush=True)
    simulate = bool(gaps) or bool(answer.unmodelled) or args.verify
    if gaps and not args.json:
        print("\nThe analytic model does not hold for this day:")
        print("\n".join(f"  - {gap}" for gap in gaps))
        print("so the answer is found again by simulating the day.", flush=True)
    if answer.unmodelled and not args.json:
        names = ", ".join(strategy.label for strategy in answer.unmodelled)
        print(f"\nThe analytic model has no cost for {names}, so the answer is found again by simulating "
              "the day with every strategy.", flush=True)
    if not simulate:
        if args.json:
            print(json.dumps(output, indent=2, allow_nan=False))
        return 0
    unit = "days" if replayed else "seeds"
    seeds = seeds or (LOG_SEEDS if replayed else SYNTHETIC_SEEDS)
    which = f"seed {seeds[0]}" if isinstance(seeds, list) else f"{seeds} seed{'s' if seeds > 1 else ''}"
    workers = workers or os.cpu_count() or 1

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if design is not None and design_scenarios:
        scenarios = design_scenarios  # the design day's own days are simulated, not every day of the log
    day_config = {"params": params, "scenarios": scenarios}
    delays = len([d for d in EDIT_DELAYS_S if d <= day.day_s]) + 1
    if not args.quiet:
        log(f"Simulating: the check intervals around the model's answer (wider until the cheapest meeting the "
            f"target is found), and edits after {delays} delays, on {len(scenarios) if replayed else 1} "
            f"day{'s' if replayed and len(scenarios) > 1 else ''} x {which}, "
            f"{workers} worker{'s' if workers > 1 else ''} (results in {out}/, reused when you ask again).")
    try:
        simulated = simulate_advice(day_config, answer, out_dir=out, seeds=seeds, unit=unit, workers=workers,
                                    log=None if (args.json or args.quiet) else log, yes=args.yes)
    except TooLargeError as exc:
        log(f"kbsim advise: error: the simulation: {exc.problem}")
        log("  (the answer above is the model's; lower --seeds, or pass --yes to simulate anyway)")
        return 2
    except (ConfigError, ResultsError) as exc:
        return _error(f"the simulation: {exc}")
    except RuntimeError as exc:
        log(f"kbsim advise: {exc}")
        return 1
    output["simulated"] = simulated.to_dict()
    if args.json:
        print(json.dumps(output, indent=2, allow_nan=False, default=_plain))
        return 0
    print(f"\nSimulated ({simulated.units} {simulated.unit} per point, {simulated.runs} runs; 95% intervals over "
          f"{simulated.unit}):")
    print("\n".join(simulated.lines()))
    print("\n".join(simulated.comparison_lines()), flush=True)
    return 0


def _plain(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON: {value!r}")
