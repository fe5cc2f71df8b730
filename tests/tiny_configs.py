"""Tiny experiment configs shared by the config, runner and Dask tests (seconds per sweep)."""

#: A small day with two seeds; tests append or replace lines of it.
TINY_DAY = """\
params:
  day_hours: 2
  corpus: {articles: 30}
  questions.count: 20
  saves.count: 30
seeds: 2
"""

#: The same day as a sweep: zipf and control, without edits and with a 60 s edit delay.
TINY_SWEEP = TINY_DAY + """\
scenarios:
  zipf: {}
  control: {saves.popularity: uniform}
sweep:
  edit.delay_s: [null, 60]
"""
