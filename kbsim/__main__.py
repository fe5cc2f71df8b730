"""``python -m kbsim``: the ``kbsim`` command line (:func:`kbsim.cli.main`)."""

import sys

from kbsim.cli import main

sys.exit(main())
