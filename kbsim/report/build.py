"""``kbsim figures``: run what the figures need, draw them, and write the pages.

The command hands every path in; this module never looks for a checkout.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from kbsim.report import pages
from kbsim.report.experiments import Experiment, Experiments
from kbsim.report.figures import FigureSpec, specs

#: The experiments the results pages need besides the figures'.
PAGE_EXPERIMENTS = ("reference", "control", "sample_kb", "approval")
#: The experiment the reproduction page reads.
REPRODUCTION_EXPERIMENTS = ("writeup",)


def build_figures(
    only: Iterable[str] | None = None,
    *,
    experiments_dir: str | Path,
    results_dir: str | Path,
    figures_dir: str | Path,
    docs_path: str | Path | None = None,
    readme_path: str | Path | None = None,
    reproduction_path: str | Path | None = None,
    quick: bool = False,
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
    fresh: bool = False,
    progress: bool = True,
) -> list[Path]:
    """Run what is missing, draw the figures, write figures/README.md and the results pages.

    Returns the files written. ``only`` restricts to named figures; the pages are
    rewritten only when every figure is drawn. ``reproduction_path``: also write the
    write-up's claims beside kbsim (:mod:`kbsim.report.reproduction`) there. ``progress``
    shows the runner's bars (on a terminal); ``log`` takes the status lines.

    Raises:
        ForeignPageError: a page to be written is a file kbsim did not write; checked
            before anything runs, so nothing is changed.
    """
    from kbsim.report.links import check_page_ours

    chosen = specs(only)
    if not only:
        for page in (Path(figures_dir) / "README.md", docs_path, reproduction_path):
            if page is not None:
                check_page_ours(page)
    needed = dict.fromkeys(name for spec in chosen for name in spec.experiments)
    if docs_path is not None and not only:
        needed.update(dict.fromkeys(PAGE_EXPERIMENTS))
    if reproduction_path is not None and not only:
        needed.update(dict.fromkeys(REPRODUCTION_EXPERIMENTS))
    exps = Experiments(
        needed,
        experiments_dir=experiments_dir,
        results_dir=results_dir,
        quick=quick,
        workers=workers,
        log=log,
        fresh=fresh,
        progress=progress,
    )
    source = {"experiments_dir": experiments_dir, "results_dir": results_dir, "quick": quick}
    drawn = _draw_all(chosen, exps, source, figures_dir, with_alt=not only, workers=workers)
    written: list[Path] = []
    for spec in chosen:
        written += drawn[spec.name].written
        if log:
            log(f"wrote {figures_dir}/{spec.name}.png and .svg")
    if not only:
        captions = {spec.name: drawn[spec.name].caption for spec in chosen}
        alts = {spec.name: drawn[spec.name].alt for spec in chosen}
        written.append(pages.write_figures_readme(figures_dir, quick, captions, alts))
        if docs_path is not None:
            written.append(pages.write_results_markdown(exps, docs_path, figures_dir))
            if readme_path is not None and Path(readme_path).exists():
                written.append(pages.update_readme_results(exps, readme_path, figures_dir))
        if reproduction_path is not None:
            from kbsim.report.reproduction import write_reproduction

            written.append(write_reproduction(exps, reproduction_path))
        if docs_path is not None and readme_path is not None and Path(readme_path).exists():
            text = Path(readme_path).read_text(encoding="utf-8")
            held = {name for name in pages.README_BLOCKS if name != "results" and pages.block_start(name) in text}
            if held:
                blocks = readme_prose_blocks(exps, results_dir, held, workers=workers, progress=progress, log=log)
                pages.update_readme_blocks(readme_path, blocks)
    return written


@dataclass(frozen=True)
class _Drawn:
    """A figure drawn and saved: its files, its caption and (for the pages) its alt text."""

    written: list[Path]
    caption: str
    alt: str


def _draw(spec: FigureSpec, exps: Mapping[str, Experiment], figures_dir: str | Path, with_alt: bool) -> _Drawn:
    from kbsim.report import plots

    by_name = cast(dict[str, Experiment], exps)  # the figures only look experiments up by name
    fig = spec.draw(by_name)
    caption = plots.caption_of(fig)
    written = plots.save_figure(fig, figures_dir, spec.name)
    return _Drawn(written, caption, spec.alt_text(by_name) if with_alt else "")


def _draw_group(
    names: list[str], source: dict, figures_dir: str | Path, with_alt: bool
) -> tuple[dict[str, _Drawn], dict[str, Experiment]]:
    """In a worker process: load the experiments of the figures ``names`` (their runs are done)
    and draw them; the experiments loaded go back too, so the pages need not load them again."""
    chosen = specs(names)
    exps = Experiments(
        dict.fromkeys(name for spec in chosen for name in spec.experiments), run_missing=False, **source
    )
    return {spec.name: _draw(spec, exps, figures_dir, with_alt) for spec in chosen}, exps.loaded()


def _groups(chosen: list[FigureSpec]) -> list[list[str]]:
    """The figures in groups that share no experiment (each group's experiments are loaded once)."""
    groups: list[tuple[set[str], list[str]]] = []
    for spec in chosen:
        sharing = [group for group in groups if group[0] & set(spec.experiments)]
        merged: tuple[set[str], list[str]] = (set(spec.experiments), [])
        for group in sharing:
            merged[0].update(group[0])
            merged[1].extend(group[1])
            groups.remove(group)
        merged[1].append(spec.name)
        groups.append(merged)
    return [names for _, names in groups]


def _draw_all(
    chosen: list[FigureSpec],
    exps: Experiments,
    source: dict,
    figures_dir: str | Path,
    *,
    with_alt: bool,
    workers: int | None,
) -> dict[str, _Drawn]:
    """Draw and save every chosen figure: figures that share no experiment side by side in up to
    ``workers`` processes (default: the CPU count), each loading the experiments it reads;
    with one worker or one group, here."""
    groups = _groups(chosen)
    workers = min(workers or os.cpu_count() or 1, len(groups))
    if workers <= 1:
        return {spec.name: _draw(spec, exps, figures_dir, with_alt) for spec in chosen}
    import concurrent.futures
    import multiprocessing

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    drawn: dict[str, _Drawn] = {}
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
        futures = [pool.submit(_draw_group, names, source, figures_dir, with_alt) for names in groups]
        for future in futures:
            group_drawn, loaded = future.result()
            drawn.update(group_drawn)
            exps.adopt(loaded)
    return drawn


def readme_prose_blocks(
    exps, results_dir: str | Path, wanted: Iterable[str], *, workers: int | None = None, progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> dict[str, list[str]]:
    """The README's generated prose besides the results block, for the ``wanted`` block names:
    what to check and how often (with ``kbsim advise --verify``'s runs, made or reused under
    ``results_dir``) and the write-up checked (when its experiment was loaded)."""
    from kbsim.report import check_advice, reproduction

    wanted = set(wanted)
    blocks: dict[str, list[str]] = {}
    if wanted & {check_advice.ADVICE_BLOCK, check_advice.CHECK_POLICY_BLOCK}:
        answer = check_advice.reference_advice()
        verified = None
        if check_advice.ADVICE_BLOCK in wanted:
            verified = check_advice.verify_reference_advice(
                answer, results_dir, workers=workers, progress=progress, log=log
            )
        blocks.update(check_advice.advice_blocks(exps, answer, verified))
    if reproduction.README_BLOCK in wanted and reproduction.EXPERIMENT in exps:
        blocks[reproduction.README_BLOCK] = reproduction.readme_paragraph(exps)
    return {name: lines for name, lines in blocks.items() if name in wanted}
