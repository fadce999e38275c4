"""``python -m fedtheory ...`` is the ``fedtheory`` command line (see :mod:`fedtheory.cli`)."""
import sys

from fedtheory.cli import main

if __name__ == "__main__":
    sys.exit(main())
