"""The closed-form layer: what the day's parameters predict without simulating.

:mod:`~kbsim.model.analytic` is the freshness model (staleness, check cost, edit
conflicts); :mod:`~kbsim.model.advise` chooses a check policy and an edit delay from it.
"""
