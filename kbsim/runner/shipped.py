"""The experiment configs kbsim ships (the top-level ``experiments/*.yaml``), found by name from any folder.

The wheel carries them as package data (``kbsim/experiments/``, copied there by ``setup.py``'s
build step), and an editable install reads them in its checkout, so ``kbsim run reference``
and ``kbsim experiments`` work wherever kbsim is installed. A path to a YAML file of your own
works everywhere a name does.
"""

from __future__ import annotations

from pathlib import Path

from kbsim.runner.errors import ConfigError

_PACKAGE = Path(__file__).resolve().parents[1]
#: The folder of the shipped configs: inside the package of an installed wheel, else the
#: ``experiments/`` beside the package, in the checkout of an editable install (the first that
#: holds a config: an empty folder left behind by an old checkout does not count).
SHIPPED_DIR = next(
    (folder for folder in (_PACKAGE / "experiments", _PACKAGE.parent / "experiments") if any(folder.glob("*.yaml"))),
    _PACKAGE / "experiments",
)
#: What a config file's name ends with.
SUFFIXES = (".yaml", ".yml")


def shipped_experiments() -> dict[str, Path]:
    """Each shipped experiment's name (its file's stem) and path, sorted by name."""
    return {path.stem: path for path in sorted(SHIPPED_DIR.glob("*.yaml"))}


def experiment_path(name_or_path: str | Path) -> Path:
    """The config file that ``kbsim run NAME_OR_PATH`` means.

    An existing file, or anything that reads as a path (a folder separator or a
    ``.yaml``/``.yml`` ending), is a path, taken as given; a bare name is a shipped
    experiment (``reference`` is ``experiments/reference.yaml``).

    Raises:
        ConfigError: a bare name that is neither a file nor a shipped experiment; the
            message lists the shipped ones.
    """
    text = str(name_or_path)
    path = Path(text).expanduser()
    if path.is_file() or "/" in text or "\\" in text or path.suffix in SUFFIXES:
        return path
    shipped = shipped_experiments()
    if text in shipped:
        return shipped[text]
    raise ConfigError(
        text,
        "",
        "no such config file, and no shipped experiment of that name (shipped: "
        f"{', '.join(shipped) or 'none'}; `kbsim experiments` describes them)",
    )

