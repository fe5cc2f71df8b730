"""Write the example log kbsim ships, ``examples/helpdesk-log/saves.csv`` and ``questions.csv``.

The log is generated, deterministically, by :data:`kbsim.fit.synthetic.EXAMPLE` (seed
:data:`kbsim.fit.synthetic.EXAMPLE_SEED`): ten working days of the sample help desk with office
hours, a morning peak, a lunch dip and saves in sessions. ``tests/test_fit.py`` checks that
the shipped files are exactly what this writes.

    python scripts/make_example_log.py
"""

from __future__ import annotations

from pathlib import Path

from kbsim.fit.synthetic import write_example_log

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    for path in write_example_log(ROOT / "examples" / "helpdesk-log"):
        print(path.relative_to(ROOT))
