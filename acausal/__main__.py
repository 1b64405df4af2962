"""``python -m acausal``: the command line (:mod:`acausal.cli`)."""

import sys

from .cli import main

sys.exit(main())
