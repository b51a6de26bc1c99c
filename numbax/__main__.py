"""``python -m numbax``: the same command as the ``numbax`` console script."""
import sys

from numbax.cli import main

if __name__ == "__main__":
    sys.exit(main())
