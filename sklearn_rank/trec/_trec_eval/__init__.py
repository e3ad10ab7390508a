"""trec_eval 10.0: its measures, its tie order and its output, as its binary computes them.

:mod:`.rankings` joins qrels and run into trec_eval's rankings, :mod:`.table` declares its
measures and parses ``-m`` arguments, prints its lines and summaries, :mod:`.specs` makes its
measures entries of an :class:`~sklearn_rank.metrics.Evaluation`, and :mod:`.drop_in` is
:func:`sklearn_rank.trec.trec_eval`. The measure kernels are internal (``_measures``, ``_gain``,
``_set``, ``_irm``).
"""
