"""``python -m sklearn_rank``: the ``sklearn-rank`` command line."""

from .cli._entry import program  # first: from here on, Ctrl-C exits 130 quietly

if __name__ == "__main__":
    import sys

    sys.exit(program())
