"""``python -m sklearn_rank``: the ``sklearn-rank`` command line."""

import sys

from ._cli import program

if __name__ == "__main__":
    sys.exit(program())
