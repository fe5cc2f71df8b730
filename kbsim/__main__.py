import sys

from kbsim.cli import main

sys.exit(main())
