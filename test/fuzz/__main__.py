"""`python test/fuzz ...`: the fuzzing command line of run.py (see its docstring)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from run import main  # noqa: E402

sys.exit(main())
