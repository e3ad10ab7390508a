"""The ``sklearn-rank`` command line (also ``python -m sklearn_rank``): the top layer.

The console script enters through :func:`._entry.program`, which builds the parser of
:mod:`._app` (one module per command: :mod:`._tune`, :mod:`._evaluate`, :mod:`._compare`,
:mod:`._trec_eval` for the trec_eval drop-in; :mod:`._runs` reads and evaluates the runs for
``evaluate`` and ``compare``). Nothing outside this folder imports it.
"""

__all__: list[str] = []  # the commands are the interface; no Python names
