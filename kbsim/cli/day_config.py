"""One day from a YAML file: an experiment config, or a file of day parameters.

``kbsim serve --config`` and ``kbsim advise --config`` take either: an experiment (such as
``kbsim fit --write-config`` writes: ``params``, ``scenarios``, ``seeds``) or a file whose
top level holds day parameters (``saves.count: 50``). An experiment gives its ``params``,
the day every scenario starts from.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kbsim.files import FileReadError, read_regular
from kbsim.inputs.safe_read import MAX_YAML_FILE_BYTES, BoundedSafeLoader
from kbsim.params import DayParams
from kbsim.runner.config import ExperimentConfig
from kbsim.runner.config_keys import CONFIG_KEYS
from kbsim.runner.load import config_from_dict, load_config, load_day_params

__all__ = ["is_experiment", "load_day", "load_day_config"]


def is_experiment(path: str | Path) -> bool:
    """Whether the YAML at ``path`` is an experiment config (its top-level keys are a config's,
    ``params`` or ``scenarios`` among them) rather than a file of day parameters."""
    try:  # within the loaders' bounds: a regular file of bounded size, bounded depth and aliases
        text = read_regular(path, MAX_YAML_FILE_BYTES, what="config file").decode("utf-8-sig")
        raw = yaml.load(text, Loader=BoundedSafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, FileReadError):
        return False  # the loaders say what is wrong, naming the file
    return isinstance(raw, dict) and bool(raw) and set(raw) <= set(CONFIG_KEYS) and bool(
        {"params", "scenarios", "sweep"} & set(raw))


def load_day_config(path: str | Path) -> ExperimentConfig:
    """The experiment at ``path``, or one (seeds 1..5) holding the day parameters of the file.

    Raises:
        ConfigError: naming the file, the key path and what was expected.
    """
    if is_experiment(path):
        return load_config(path)
    params = load_day_params(path)
    return config_from_dict({"name": Path(path).stem, "params": params.model_dump(mode="json", exclude_defaults=True)})


def load_day(path: str | Path) -> DayParams:
    """The day of ``path``: an experiment's ``params``, or the file's day parameters."""
    if is_experiment(path):
        return DayParams.model_validate(load_config(path).params, strict=True)
    return load_day_params(path)
