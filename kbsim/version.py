"""The package's version, in a module of its own so that any layer can read it without
importing the top-level package (which re-exports from every layer).

The one source of the version (pyproject.toml reads it from here). Every run's
``run.json`` records it beside the results layout, and a run is reused only by the same
version and layout (:func:`kbsim.runner.results.check_run`), so the version changes
in every release that changes a result (CHANGELOG.md says which)."""

__version__ = "0.2.0"
