"""``python -m fedtheory ...`` is the ``fedtheory`` command line (see :mod:`fedtheory.cli`)."""

import sys

from fedtheory.cli import entry

if __name__ == "__main__":
    sys.exit(entry())
