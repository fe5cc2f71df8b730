"""The report layer: the study's experiments, figures, tables and pages.

- :mod:`kbsim.report.experiments`: load an experiment's results (running what is missing);
- :mod:`kbsim.report.figures`: which experiment feeds which figure (:data:`FIGURES`);
- :mod:`kbsim.report.plots`: the only matplotlib code;
- :mod:`kbsim.report.text_tables`: the reference table, the terminal table, number formatting;
- :mod:`kbsim.report.pages`: figures/README.md, docs/results.md and the README block;
- :mod:`kbsim.report.model_checks`: the simulation beside the analytic model;
- :mod:`kbsim.report.build`: ``kbsim figures`` end to end.

It reads results; it never runs a day itself (the runner does) and never decides
what a metric means (:mod:`kbsim.stats` does).
"""
