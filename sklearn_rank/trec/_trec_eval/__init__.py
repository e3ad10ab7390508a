"""trec_eval 10.0 on qrels and runs: its tie order and its output, as its binary prints them.

:mod:`.rankings` joins qrels and run into trec_eval's rankings, :mod:`.table` prints its
lines and summaries, :mod:`.specs` makes its measures entries of
:func:`~sklearn_rank.trec.evaluate_run`'s :class:`~sklearn_rank.metrics.Evaluation`, and
:mod:`.drop_in` is :func:`sklearn_rank.trec.trec_eval`; ir_measures' Compat and Accuracy,
which read document ids and scores, are internal (``_irm``). The measure table and ``-m``
grammar are :mod:`sklearn_rank.metrics._vocab.trec_eval_table`'s, the measures
:mod:`sklearn_rank.metrics._families.trec_eval`'s.
"""
