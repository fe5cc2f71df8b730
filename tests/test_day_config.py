"""``kbsim serve --config`` and ``kbsim advise --config`` first ask whether a file is an
experiment config (kbsim.cli.day_config.is_experiment): that look is bounded like every
reader, so a FIFO or an alias bomb is answered at once, and the loader then names it."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kbsim.cli.day_config import is_experiment

REPO = Path(__file__).resolve().parents[1]
BOMB = "\n".join(
    ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(5)]
    + [f"params: [{','.join(['*f'] * 9)}]"]
)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_or_an_alias_bomb_is_no_experiment_and_answered_at_once(tmp_path):
    fifo = tmp_path / "day.yaml"
    os.mkfifo(fifo)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB, encoding="utf-8")
    started = time.monotonic()
    assert not is_experiment(fifo) and not is_experiment(bomb)
    assert time.monotonic() - started < 5
    done = subprocess.run([sys.executable, "-m", "kbsim", "serve", "--config", str(bomb)], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "alias" in done.stderr and str(bomb) in done.stderr


def test_an_experiment_and_a_file_of_day_parameters_are_told_apart(tmp_path):
    experiment = tmp_path / "exp.yaml"
    experiment.write_text("params: {saves.count: 50}\nseeds: 2\n", encoding="utf-8")
    day = tmp_path / "day.yaml"
    day.write_text("saves.count: 50\n", encoding="utf-8")
    assert is_experiment(experiment) and not is_experiment(day)
