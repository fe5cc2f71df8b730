"""kbsim's build: pyproject.toml declares everything but this one step.

The shipped experiment configs live in the top-level ``experiments/`` folder, where a user of
a clone reads and copies them. The wheel carries them as package data, ``kbsim/experiments/``,
so that ``kbsim experiments`` and ``kbsim run NAME`` work wherever kbsim is installed
(:mod:`kbsim.runner.shipped` finds them there, or in the checkout of an editable install).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

#: The configs' folder in the source tree, and where the wheel carries them.
SOURCE, PACKAGED = Path("experiments"), Path("kbsim", "experiments")


class BuildPy(build_py):
    """``build_py``, then copy ``experiments/*.yaml`` into the built package."""

    def run(self) -> None:
        """Build the package, and add the configs unless the install is editable (it reads the checkout)."""
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / PACKAGED
        self.mkpath(str(target))
        for config in sorted(SOURCE.glob("*.yaml")):
            self.copy_file(str(config), str(target / config.name))


setup(cmdclass={"build_py": BuildPy})
