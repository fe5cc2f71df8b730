"""Build kbsim's API reference from its docstrings with pdoc: ``make docs``.

Usage: python scripts/api_docs.py [OUT]   (default: build/api, which git ignores)

Every module of the package is documented, each listed by name: a package whose
``__all__`` lists only what it re-exports would otherwise hide its submodules from
pdoc. ``kbsim.__main__`` is left out. Needs pdoc (the dev extra) and every other extra,
since pdoc imports each module.
"""

from __future__ import annotations

import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "build" / "api"


def api_modules(package_dir: Path = ROOT / "kbsim", package: str = "kbsim") -> list[str]:
    """Every module of ``package`` but ``__main__``, sorted, read from the source tree."""
    modules = [package]
    for info in pkgutil.walk_packages([str(package_dir)], prefix=f"{package}."):
        if not info.name.endswith(".__main__"):  # __main__ runs the command line when imported
            modules.append(info.name)
    return sorted(modules)


def build(out: Path = DEFAULT_OUT) -> Path:
    """Write the HTML reference under ``out``; returns its index page."""
    import warnings

    import pdoc
    import pdoc.render

    pdoc.render.configure(docformat="google", footer_text="kbsim API reference")
    with warnings.catch_warnings():
        # a package without __all__ brings its submodules along: listed twice, documented once
        warnings.filterwarnings("ignore", message="The module specification .* has already been added")
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        pdoc.pdoc(*api_modules(), output_directory=out)
    return out / "index.html"


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    index = build(out)
    print(f"API reference: {index} ({len(api_modules())} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
