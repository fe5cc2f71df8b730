"""``kbsim figures``: run what the figures need, draw them, and write the pages.

The command hands every path in; this module never looks for a checkout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from kbsim.report import pages
from kbsim.report.experiments import load_experiment
from kbsim.report.figures import specs

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
    from kbsim.report import plots
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
    exps = {
        name: load_experiment(
            name,
            experiments_dir=experiments_dir,
            results_dir=results_dir,
            quick=quick,
            workers=workers,
            log=log,
            fresh=fresh,
            progress=progress,
        )
        for name in needed
    }
    written: list[Path] = []
    captions: dict[str, str] = {}
    for spec in chosen:
        fig = spec.draw(exps)
        captions[spec.name] = plots.caption_of(fig)
        written += plots.save_figure(fig, figures_dir, spec.name)
        if log:
            log(f"wrote {figures_dir}/{spec.name}.png and .svg")
    if not only:
        alts = {spec.name: spec.alt_text(exps) for spec in chosen}
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
