"""trec_eval 10.0's measures on its rankings (:class:`.ranked.Ranked`), as its binary computes
them.

:mod:`.ranked` is the rankings' layout (relevance codes in trec_eval's rank order, query by
query), :mod:`.measures` computes the measures of
:data:`~sklearn_rank.metrics._vocab.trec_eval_table.MEASURES` on it (per query and summary,
in trec_eval's summation order) and :mod:`.entries` makes them entries of an
:class:`~sklearn_rank.metrics.Evaluation`. The kernels are internal (``_measures``,
``_gain``, ``_set``); :mod:`.gains` is trec_eval's gain list and ideal ranking of
gain pairs, which the registry's ``ndcg(gains=...)`` uses too. Building the rankings
from qrels and a run is :mod:`sklearn_rank.trec._trec_eval.rankings`'s.
"""
