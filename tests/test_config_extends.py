"""``extends: NAME`` reaches a shipped experiment from any folder and says so; a ``--set`` error
names the key as the user wrote it (issue 39)."""

from __future__ import annotations

import pytest

from kbsim.runner.config import ConfigError
from kbsim.runner.load import config_from_dict, load_config
from kbsim.runner.shipped import shipped_experiments


def test_extends_a_shipped_experiment_by_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text("name: mine\nextends: reference\nseeds: 2\n", encoding="utf-8")
    config = load_config(tmp_path / "mine.yaml")
    reference = load_config(shipped_experiments()["reference"])
    assert config.params == reference.params and config.sweep == reference.sweep and config.seeds == [1, 2]
    assert config.notes == [f"{tmp_path / 'mine.yaml'}: extends: reference is the shipped experiment "
                            f"{shipped_experiments()['reference'].resolve()} (no file reference beside it)"]
    from_dict = config_from_dict({"name": "mine", "extends": "reference", "seeds": 2})
    assert from_dict.sweep == reference.sweep and "shipped experiment" in from_dict.notes[0]


def test_a_file_of_that_name_comes_first(tmp_path):
    (tmp_path / "reference").write_text("name: local\nseeds: 3\n", encoding="utf-8")
    (tmp_path / "mine.yaml").write_text("name: mine\nextends: reference\n", encoding="utf-8")
    config = load_config(tmp_path / "mine.yaml")
    assert config.seeds == [1, 2, 3] and config.notes == [] and not config.sweep


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("edit.delay_s=soon", "--set edit.delay_s=soon: edit.delay_s: expected a duration"),
        ("saves.count=-1", "--set saves.count=-1: saves.count: expected greater than or equal to 0"),
    ],
)
def test_a_set_error_names_the_key_as_written(override, message):
    with pytest.raises(ConfigError) as error:
        load_config(shipped_experiments()["reference"], [override])
    assert str(error.value).startswith(message)
    assert "sweep.edit" not in str(error.value) and "params.saves" not in str(error.value)


def test_validation_reports_every_error_at_once_up_to_a_limit(tmp_path):
    from kbsim.runner.config import MAX_REPORTED, ConfigErrors

    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nparams:\n  saves: {count: -5}\n  edit: {delay_s: soon}\nseeds: 0-x\n",
                    encoding="utf-8")
    with pytest.raises(ConfigErrors) as error:
        load_config(path)
    assert [e.key_path for e in error.value.errors] == ["params.saves.count", "params.edit.delay_s", "seeds"]
    text = str(error.value)
    assert "\n" not in text and "and 2 more: params.edit.delay_s: expected a duration" in text
    errors = [ConfigError("f.yaml", f"params.k{i}", "bad") for i in range(MAX_REPORTED + 3)]
    text = str(ConfigErrors(errors))
    assert text.count("params.k") == MAX_REPORTED and text.endswith("... and 3 more not shown")


def test_the_outline_counts_every_shipped_config_as_the_loader_does():
    """``kbsim experiments`` reads configs without validating them (kbsim.runner.grid): its
    description and run count are the loaded config's, extends chains included."""
    from kbsim.runner.grid import config_outline, expand_sweep

    shipped = shipped_experiments()
    assert len(shipped) >= 10
    for name, path in shipped.items():
        config = load_config(path)
        runs = len(config.scenarios) * len(expand_sweep(config.sweep)) * len(config.seeds)
        assert config_outline(path) == (config.description, runs), name


def test_the_outline_refuses_what_the_loader_refuses_in_what_it_reads(tmp_path):
    from kbsim.runner.grid import config_outline

    base = tmp_path / "base.yaml"
    base.write_text("name: base\nseeds: 0\n")
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nsweep: {saves.count: []}\n")
    with pytest.raises(ConfigError, match="seeds: expected a count of at least 1"):
        config_outline(child)
    base.write_text("name: base\nscenarios: []\n")
    with pytest.raises(ConfigError, match="scenarios: expected a non-empty mapping"):
        config_outline(child)
    base.write_text("name: base\n")
    with pytest.raises(ConfigError, match="sweep: sweep 'saves.count': empty list"):
        config_outline(child)
    (tmp_path / "loop.yaml").write_text("extends: loop.yaml\n")
    with pytest.raises(ConfigError, match="circular extends"):
        config_outline(tmp_path / "loop.yaml")
