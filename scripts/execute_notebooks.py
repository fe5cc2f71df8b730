"""Execute the notebooks in place, full study, so a reader browsing the repository sees them run.

``make reproduce`` calls this after ``kbsim figures`` (every experiment is cached by then, so
the notebooks only read results). The outputs are kept deterministic: the same results give the
same bytes. Timings are not recorded, images carry no software or date stamp
(kbsim.report.plots.png_bytes), execution counts run 1, 2, ... and an output that names a path
of this machine, or an error, fails the run (nothing is written then).

The notebooks run side by side, at most ``--workers`` kernels at once (default: the CPU
count): each reads its experiments under the results folders' read lock
(kbsim.runner.results.ResultsDirectory.read_lock), so two of them may read one folder at once,
and a notebook that has runs to compute takes the writer's lock only to write them.

    python scripts/execute_notebooks.py [--workers N] [NOTEBOOK ...]
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

from kbsim.files import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def leaks(notebook) -> list[str]:
    """Outputs that would make the committed notebook depend on this machine or this run."""
    found = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append(f"cell {index}: an error ({output.get('ename')}: {output.get('evalue')})")
            text = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[output])]))
            for marker in (str(ROOT), "/tmp/", "/home/"):
                if marker in text:
                    found.append(f"cell {index}: an output names {marker!r}")
    return found


def kernel_config() -> Config:
    """The kernel manager's settings: its channels encrypted with CurveZMQ
    (``KernelManager.transport_encryption = "auto"``, jupyter_client 8.9 and later, for a
    kernelspec that declares ``supported_encryption``, as ipykernel's does) where pyzmq has
    CurveZMQ. Without it ipykernel warns, on every kernel start, that the kernel runs over
    TCP without encryption: that warning goes away because the traffic is encrypted, not
    because a warning is filtered. An older jupyter_client, which has no such setting (and
    whose ipykernel does not warn), gets none, so traitlets does not warn of an unknown one."""
    import zmq
    from jupyter_client.manager import KernelManager

    if "transport_encryption" in KernelManager.class_trait_names() and zmq.has("curve"):
        return Config({"KernelManager": {"transport_encryption": "auto"}})
    return Config()


def notebook_client(notebook, path: Path) -> NotebookClient:
    """The client that runs ``notebook`` (read from ``path``) in its folder, on an encrypted kernel."""
    return NotebookClient(
        notebook,
        timeout=1800,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        config=kernel_config(),
    )


def execute(path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    client = notebook_client(notebook, path)
    previous = os.environ.pop("KBSIM_QUICK", None)
    try:
        client.execute()
    finally:
        if previous is not None:
            os.environ["KBSIM_QUICK"] = previous
    problems = leaks(notebook)
    if problems:
        raise SystemExit(f"{path.name}: not written: " + "; ".join(problems[:5]))
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    text = nbformat.writes(notebook)  # what nbformat.write writes, then written atomically
    atomic_write_text(path, text if text.endswith("\n") else text + "\n")
    return f"executed {path.relative_to(ROOT)}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Execute the notebooks in place, full study.")
    parser.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="default: every notebooks/*.ipynb")
    parser.add_argument(
        "--workers", type=int, default=None, metavar="N", help="notebooks run at once (default: CPU count)"
    )
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers: expected at least 1, got {args.workers}")
    paths = [Path(p).resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    workers = min(args.workers or os.cpu_count() or 1, len(paths))
    if workers <= 1:
        for path in paths:
            print(execute(path), flush=True)
        return 0
    # a process each: one kernel per notebook either way, and a failure stays in its notebook
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(execute, path) for path in paths]
        try:
            for future in futures:  # in the notebooks' order
                print(future.result(), flush=True)
        except BaseException:  # the first failure: notebooks not started are not (those running finish)
            for future in futures:
                future.cancel()
            raise
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
