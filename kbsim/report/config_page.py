"""``docs/config.md``: every key of an experiment config, written from the schema that validates it.

The top-level keys are :data:`kbsim.runner.config_keys.KEYS` (what each does is said in
:data:`TOP_LEVEL`, which must name exactly those keys), the keys of a contrast are
:data:`kbsim.runner.config_keys.CONTRAST_KEYS`, and the parameters of a day are the fields of
:class:`kbsim.params.DayParams`, each with its type, default and description. ``python -m
kbsim.report.config_page docs/config.md`` rewrites the page; ``tests/test_config_page.py`` fails
when the page and the schema differ.
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path

from pydantic import BaseModel

from kbsim.files import atomic_write_text
from kbsim.params import DayParams
from kbsim.runner.config_keys import CONTRAST_KEYS, KEYS

#: What each top-level key does; its keys are exactly those of ``KEYS``.
TOP_LEVEL = {
    "name": "The experiment's name: its results go to `OUT/<name>/`. Not inherited through `extends`. "
    "Default: the file's name without `.yaml`.",
    "extends": "A config file this one starts from (a path relative to this file), or the name of a shipped "
    "experiment (`extends: reference`) when no file of that name is there; `kbsim run` says which it used. "
    "Keys set here override the inherited ones, key by key; `name` and `contrasts` are not inherited. "
    "A chain is at most 32 files long.",
    "description": "One line on the question the experiment answers (`kbsim experiments` lists it).",
    "params": "The day's parameters (below), nested (`saves: {count: 500}`) or dotted (`saves.count: 500`), "
    "for every run. A duration takes its unit (`10min`) or is seconds.",
    "seeds": "The seeds every point runs: a count N (seeds 1 to N), a list, or a range `A-B`. Default: 1 to 5.",
    "scenarios": "Named sets of parameters, each over `params` (`zipf: {}`, `control: {saves.popularity: "
    "uniform}`); every scenario runs every sweep point. Default: one scenario, `default`.",
    "sweep": "Parameters (dotted) and the values each takes; the runs are the product of the lists (a scalar "
    "is one value, an empty list is refused).",
    "contrasts": "Comparisons between points, paired on common seeds: each names a `metric` (and `at`, "
    "`strategy`, `subset`), a `baseline` point, optionally `where` it applies, and `compare` "
    "(`difference` or `ratio`). Not inherited through `extends`.",
}


def _type_name(annotation: object) -> str:
    """A field's type in words: ``float or None``, ``'uniform' or 'poisson'``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " or ".join(repr(arg) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(arg) for arg in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(_type_name(arg) for arg in args)}]"
    return "None" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))


def _rows(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str, str]]:
    rows = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            rows.extend(_rows(annotation, f"{prefix}{name}."))
            continue
        default = field.get_default(call_default_factory=True)
        described = (field.description or "").replace("|", "\\|").replace("\n", " ")
        rows.append((f"{prefix}{name}", _type_name(annotation), repr(default), described))
    return rows


def config_page() -> str:
    """The text of ``docs/config.md``, from the schema."""
    if set(TOP_LEVEL) != set(KEYS):
        raise KeyError(f"TOP_LEVEL names {sorted(TOP_LEVEL)}; the schema's keys are {sorted(KEYS)}")
    lines = [
        "# Experiment configs: every key",
        "",
        "<!-- written by `python -m kbsim.report.config_page docs/config.md` from kbsim.runner.config_keys.KEYS "
        "and kbsim.params.DayParams; tests/test_config_page.py fails when they differ -->",
        "",
        "An experiment is a YAML file (`kbsim run FILE`, `kbsim.study(FILE)`) or a dict "
        "(`kbsim.Study.from_config({...})`). Unknown keys are refused, naming the key and the file; "
        "`--set KEY=VALUE` overrides any key or parameter.",
        "",
        "## Top-level keys",
        "",
        "| key | what it is |",
        "| --- | --- |",
        *(f"| `{name}` | {TOP_LEVEL[name]} |" for name in KEYS),
        "",
        f"A contrast's keys: {', '.join(f'`{key}`' for key in CONTRAST_KEYS)}.",
        "",
        "## Parameters of a day (`params`, a scenario, a sweep)",
        "",
        "| parameter | type | default | what it is |",
        "| --- | --- | --- | --- |",
        *(f"| `{name}` | `{kind}` | `{default}` | {text} |" for name, kind, default, text in _rows(DayParams)),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Write the page to ``argv[0]`` (default ``docs/config.md``)."""
    atomic_write_text(Path(argv[0] if argv else "docs/config.md"), config_page())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
