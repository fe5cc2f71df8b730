"""Experiment configs: sweep expansion edge cases, extends, --set, and malformed configs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tiny_configs import TINY_DAY

from kbsim.cli import main
from kbsim.params import DayParams
from kbsim.runner import config_keys as schema
from kbsim.runner.config import ConfigError, ExperimentConfig, expand_sweep
from kbsim.runner.config_keys import CONFIG_KEYS, KEYS, Key, parse_seeds
from kbsim.runner.load import config_from_dict, load_config
from kbsim.runner.shipped import SHIPPED_DIR

TINY = TINY_DAY


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


# ------------------------------------------------------------------ expansion


def test_expand_sweep_product_order_last_key_fastest():
    points = expand_sweep({"a": [1, 2], "b": ["x", "y", "z"]})
    assert [(p["a"], p["b"]) for p in points] == [
        (1, "x"), (1, "y"), (1, "z"), (2, "x"), (2, "y"), (2, "z"),
    ]  # fmt: skip


def test_expand_sweep_scalars_strings_and_null_pass_through():
    assert expand_sweep({"a": 3, "b": "uniform", "c": None, "d": [None, 5]}) == [
        {"a": 3, "b": "uniform", "c": None, "d": None},
        {"a": 3, "b": "uniform", "c": None, "d": 5},
    ]
    assert expand_sweep({}) == [{}]


def test_expand_sweep_empty_list_is_an_error():
    with pytest.raises(ValueError, match="'zipf_s': empty list"):
        expand_sweep({"zipf_s": []})


def test_config_runs_cover_scenarios_points_and_seeds(tmp_path):
    path = write(
        tmp_path,
        "grid.yaml",
        TINY
        + """\
scenarios:
  zipf: {}
  control: {saves: {popularity: uniform}}
sweep:
  edit:
    delay_s: [null, 5, 60]
  arrivals: poisson
""",
    )
    config = load_config(path)
    runs = config.runs()
    assert config.name == "grid"
    assert config.swept == ["edit.delay_s", "arrivals"]
    assert [(r.scenario, r.point["edit.delay_s"], r.seed) for r in runs] == [
        (scenario, delay, seed)
        for scenario in ("zipf", "control")
        for delay in (None, 5.0, 60.0)
        for seed in (1, 2)
    ]
    for run in runs:
        assert isinstance(run.params, DayParams)
        assert run.params.edit.delay_s == run.point["edit.delay_s"]
        assert run.params.arrivals == "poisson"  # a string is one value, not iterated
        assert run.params.corpus.articles == 30 and run.params.questions.count == 20
        expected = "uniform" if run.scenario == "control" else "zipf"
        assert run.params.saves.popularity == expected
    assert len({r.run_id for r in runs}) == len(runs) == 12


def test_run_ids_hash_validated_params_and_seed(tmp_path):
    plain = load_config(write(tmp_path, "plain.yaml", TINY))
    spelled = load_config(
        write(tmp_path, "spelled.yaml", TINY + "sweep: {zipf_s: 0.9}\ndescription: same days\n")
    )
    # zipf_s 0.9 is the default: same parameters, same seeds, so the same runs
    assert [r.run_id for r in plain.runs()] == [r.run_id for r in spelled.runs()]
    other_seed = load_config(write(tmp_path, "seeds.yaml", TINY), seeds="3-4")
    assert not {r.run_id for r in plain.runs()} & {r.run_id for r in other_seed.runs()}
    assert plain.fingerprint() == load_config(tmp_path / "plain.yaml").fingerprint()
    assert plain.fingerprint() != other_seed.fingerprint()


def test_extends_deep_merges_and_keeps_its_own_name(tmp_path):
    write(
        tmp_path,
        "base.yaml",
        TINY + "name: base\nscenarios: {zipf: {}, control: {saves.popularity: uniform}}\n",
    )
    (tmp_path / "sub").mkdir()
    child = write(
        tmp_path / "sub",
        "child.yaml",
        """\
        extends: ../base.yaml
        params: {saves: {count: 40}, corpus.title_words: 3}
        scenarios: {control: {questions.count: 10}}
        sweep: {zipf_s: [0.5, 1.0]}
        """,
    )
    config = load_config(child)
    assert config.name == "child"
    assert config.params == {
        "day_hours": 2,
        "corpus": {"articles": 30, "title_words": 3},
        "questions": {"count": 20},
        "saves": {"count": 40},
    }
    assert config.scenarios == {
        "zipf": {},
        "control": {"saves": {"popularity": "uniform"}, "questions": {"count": 10}},
    }
    assert config.seeds == [1, 2]


def test_set_overrides_params_pins_sweeps_and_top_level_keys(tmp_path):
    path = write(tmp_path, "s.yaml", TINY + "sweep: {edit.delay_s: [null, 5, 60]}\n")
    config = load_config(
        path,
        ["saves.count=99", "edit.delay_s=60", "seeds=[7, 9]", "sweep.zipf_s=[0, 1.5]", "name=x"],
    )
    assert config.name == "x"
    assert config.seeds == [7, 9]
    assert config.sweep == {"edit.delay_s": 60, "zipf_s": [0, 1.5]}
    assert {r.params.saves.count for r in config.runs()} == {99}
    assert [r.point for r in config.runs()][::2] == [
        {"edit.delay_s": 60.0, "zipf_s": 0.0},
        {"edit.delay_s": 60.0, "zipf_s": 1.5},
    ]
    nulled = load_config(path, ["edit.delay_s="])  # an empty YAML value is null
    assert {r.params.edit.delay_s for r in nulled.runs()} == {None}


def test_parse_seeds_forms():
    assert parse_seeds(3) == [1, 2, 3]
    assert parse_seeds([5, 0]) == [5, 0]
    assert parse_seeds("4") == [1, 2, 3, 4]
    assert parse_seeds("2-4 9,11") == [2, 3, 4, 9, 11]


def test_scientific_notation_reads_as_a_number(tmp_path):
    config = load_config(write(tmp_path, "e.yaml", TINY + "sweep: {edit.delay_s: [1e3, 2E+1]}\n"))
    assert [r.params.edit.delay_s for r in config.runs()][::2] == [1000.0, 20.0]


# ------------------------------------------------------------- malformed configs

MALFORMED = {
    "top_level_typo": (
        TINY + "sweeps: {zipf_s: [1]}\n",
        "sweeps",
        "unknown key; expected one of: name, extends, description, params, seeds",
    ),
    "param_typo": (
        TINY + "scenarios: {zipf: {saves: {cuont: 5}}}\n",
        "scenarios.zipf.saves.cuont",
        "unknown parameter 'cuont'; expected one of: count, popularity, mix, rank_correlation, "
        "replace_unpublished, trace (did you mean 'count'",
    ),
    "sweep_typo": (
        TINY + "sweep: {saves.cuont: [1, 2]}\n",
        "sweep.saves.cuont",
        "unknown parameter 'cuont'; expected one of: count, popularity, mix, rank_correlation",
    ),
    "wrong_type": (
        TINY.replace("saves.count: 30", "saves.count: many"),
        "params.saves.count",
        "expected a valid integer, got 'many'",
    ),
    "out_of_range": (
        TINY + "sweep: {zipf_s: 7}\n",
        "sweep.zipf_s",
        "expected less than or equal to 5, got 7",
    ),
    "out_of_range_in_list": (
        TINY + "sweep: {edit.delay_s: [null, 5, -1]}\n",
        "sweep.edit.delay_s[2]",
        "expected greater than or equal to 0, got -1",
    ),
    "empty_sweep_list": (
        TINY + "sweep: {zipf_s: []}\n",
        "sweep.zipf_s",
        "empty list; expected at least one value",
    ),
    "bad_choice": (
        TINY + "scenarios: {control: {saves.popularity: uniformly}}\n",
        "scenarios.control.saves.popularity",
        "expected 'zipf' or 'uniform', got 'uniformly'",
    ),
    "cross_field": (
        TINY.replace("saves.count: 30", "saves: {count: 30, mix: {content: 0.5}}"),
        "params.saves.mix",
        "save mix shares must sum to 1",
    ),
    "seeds_zero": (TINY.replace("seeds: 2", "seeds: 0"), "seeds", "expected a count of at least 1"),
    "seeds_negative": (
        TINY.replace("seeds: 2", "seeds: [1, -2]"),
        "seeds[1]",
        "expected a non-negative integer seed, got -2",
    ),
    "duplicate_key": (TINY + "seeds: 3\n", "", "duplicate key 'seeds'"),
    "swept_and_scenario": (
        TINY + "scenarios: {c: {zipf_s: 0.1}}\nsweep: {zipf_s: [0.5, 1]}\n",
        "sweep.zipf_s",
        "also set by scenarios.c; expected a parameter to be either swept or set per scenario",
    ),
    "mapping_expected": (
        TINY + "scenarios: {zipf: {saves: 5}}\n",
        "scenarios.zipf.saves",
        "expected a valid dictionary or instance of SaveParams, got 5",
    ),
    "sweep_value_not_scalar": (
        TINY + "sweep: {zipf_s: [[1, 2]]}\n",
        "sweep.zipf_s[0]",
        "expected a number, text or null, got [1, 2]",
    ),
    "identical_scenarios": (
        TINY + "scenarios: {a: {zipf_s: 0.5}, b: {zipf_s: 0.5}}\n",
        "scenarios.b",
        "gives the same parameters as scenarios.a",
    ),
    "bad_name": (TINY + "name: ../escape\n", "name", "expected a name made of letters"),
    "yaml_syntax": (TINY + "sweep: {zipf_s: [1, 2\n", "", "invalid YAML at line"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_config_exits_2_naming_file_key_and_expectation(case, tmp_path, capsys):
    text, key_path, expected = MALFORMED[case]
    path = write(tmp_path, f"{case}.yaml", text)
    out = tmp_path / "results"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.source == str(path)
    assert info.value.key_path == key_path
    assert expected in info.value.problem
    assert main(["run", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    where = f"{path}: {key_path}: " if key_path else f"{path}: "
    assert err.startswith(f"kbsim run: error: {where}")
    assert expected in err
    assert not out.exists()


def test_error_in_an_extended_file_names_that_file(tmp_path, capsys):
    base = write(tmp_path, "base.yaml", TINY.replace("questions.count: 20", "questions.count: -1"))
    child = write(tmp_path, "child.yaml", "extends: base.yaml\nsweep: {zipf_s: [0.5, 1]}\n")
    assert main(["run", str(child), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"{base}: params.questions.count: expected greater than or equal to 0, got -1" in err
    assert not (tmp_path / "r").exists()


def test_extends_cycle_and_missing_base(tmp_path):
    write(tmp_path, "a.yaml", "extends: b.yaml\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\n")
    with pytest.raises(ConfigError, match="circular extends") as info:
        load_config(tmp_path / "a.yaml")
    assert info.value.key_path == "extends"
    write(tmp_path, "c.yaml", "extends: nowhere.yaml\n")
    with pytest.raises(ConfigError, match=r"nowhere.yaml: config file not found \(extended by"):
        load_config(tmp_path / "c.yaml")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "saves.cuont=3"], "--set saves.cuont=3: saves.cuont: unknown parameter 'cuont'"),
        (["--set", "zipf_s=high"], "--set zipf_s=high: zipf_s: expected a valid number"),
        (["--set", "nokey"], "--set nokey: expected KEY=VALUE"),
        (["--seeds", "5-2"], "--seeds: seeds: empty range '5-2'"),
        (["--workers", "0"], "--workers: expected at least 1, got 0"),
    ],
)
def test_bad_command_line_overrides_exit_2(argv, message, tmp_path, capsys):
    path = write(tmp_path, "ok.yaml", TINY)
    assert main(["run", str(path), "--out", str(tmp_path / "r"), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


EXPERIMENTS = sorted(SHIPPED_DIR.glob("*.yaml"))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_shipped_experiments_load_and_say_what_they_answer(path):
    config = load_config(path)
    assert config.name == path.stem and config.description
    assert path.read_text().startswith("# ")  # the question it answers
    assert len(config.runs()) >= 25


def test_reference_experiment_is_the_spec_reference_study():
    config = load_config(SHIPPED_DIR / "reference.yaml")
    assert config.seeds == list(range(1, 21))  # 20 seeds: --precision measured +-2 points
    by_scenario: dict[str, list] = {}
    for scenario, point, params in config.points():
        by_scenario.setdefault(scenario, []).append(point["edit.delay_s"])
        popularity = "uniform" if scenario == "control" else "zipf"
        delay = point["edit.delay_s"]
        assert params == DayParams(saves={"popularity": popularity}, edit={"delay_s": delay})
    assert by_scenario == {s: [None, 5.0, 60.0, 600.0, 3600.0] for s in ("zipf", "control")}


# ------------------------------------------------------------ the key schema


def test_every_top_level_key_is_declared_once_in_the_schema():
    """The model's fields and the schema's keys are the same set (``extends`` is resolved while
    reading; ``source`` is not a key), and the unknown-key message lists the schema."""
    assert CONFIG_KEYS == tuple(KEYS)
    assert {name for name, key in KEYS.items() if key.check is not None} == set(ExperimentConfig.model_fields) - {
        "source"
    }
    with pytest.raises(ConfigError) as refused:
        config_from_dict({"name": "x", "sweeps": {}})
    assert refused.value.problem == f"unknown key; expected one of: {', '.join(KEYS)} (did you mean 'sweep'?)"


def test_a_new_top_level_key_is_one_field_and_one_schema_entry(tmp_path, monkeypatch):
    """What adding a key takes: its field on the model and its entry in KEYS, nothing else.
    Reading, the unknown-key hint, ``extends`` (here: not inherited), ``--set`` and the type
    check all follow from the entry."""

    class WithOwner(ExperimentConfig):
        owner: str = "nobody"

    monkeypatch.setattr(schema, "ExperimentConfig", WithOwner)
    monkeypatch.setitem(KEYS, "owner", Key("owner", inherited=False))

    base = write(tmp_path, "base.yaml", TINY + "owner: alice\n")
    assert load_config(base).owner == "alice"
    child = write(tmp_path, "child.yaml", "extends: base.yaml\n")
    assert load_config(child).owner == "nobody"  # the model's default: owners are not inherited
    assert load_config(child, ["owner=bob"]).owner == "bob"
    with pytest.raises(ConfigError) as typo:
        load_config(write(tmp_path, "typo.yaml", TINY + "ownr: alice\n"))
    assert typo.value.problem.endswith(", contrasts, owner (did you mean 'owner'?)")
    with pytest.raises(ConfigError) as wrong:
        load_config(write(tmp_path, "wrong.yaml", TINY + "owner: 3\n"))
    assert (wrong.value.key_path, wrong.value.problem) == ("owner", "expected a valid string, got 3")
    with pytest.raises(ConfigError, match="expected a parameter or one of .*, owner"):
        load_config(base, ["owner.name=bob"])
