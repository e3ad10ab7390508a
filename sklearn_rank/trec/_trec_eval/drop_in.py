""":func:`trec_eval`: every trec_eval 10.0 measure from Python, as the binary computes it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from numbers import Integral

from ..._utils.validation import HasMethods, Interval, validate_params
from ...metrics._vocab.trec_eval_table import parse_measures
from .._frames import DataFrame
from .._io import read_qrels, read_run
from .._tables import Qrels, Run
from .rankings import ranked
from .table import TrecResult
from .table import trec_eval as _compute

__all__ = ["trec_eval"]


@validate_params({
    "qrels": [str, os.PathLike, HasMethods(("read",)), Qrels, DataFrame, dict],
    "run": [str, os.PathLike, HasMethods(("read",)), Run, DataFrame, dict],
    "measures": [str, Iterable],
    "relevance_level": [Interval(Integral, None, None, closed="neither")],
    "complete": ["boolean"],
    "judged_only": ["boolean"],
    "max_retrieved": [Interval(Integral, 0, None, closed="left"), None],
    "n_docs": [Interval(Integral, 0, None, closed="left")],
})
def trec_eval(qrels, run, measures: str | Iterable[str] = "official", *,
              relevance_level: int = 1, complete: bool = False, judged_only: bool = False,
              max_retrieved: int | None = None, n_docs: int = 0) -> TrecResult:
    """Evaluate a run with trec_eval 10.0's measures, names and rules.

    The same engine as ``sklearn-rank trec_eval`` (and ``sklearn-rank
    evaluate --format trec`` with trec_eval measures): every value equals the
    binary's, per query and in the summary.

    Parameters
    ----------
    qrels, run : path, file, Qrels / Run, DataFrame or dict
        As for :func:`~sklearn_rank.trec.evaluate_run`.
    measures : str or iterable of str, default="official"
        trec_eval ``-m`` arguments, in its grammar: families (``"P"``,
        ``"ndcg"``, ``"infAP"``, ...), parameters (``"P.5,10"``,
        ``"ndcg_cut.10,20"``, ``"ndcg.1=3,2=9"``, ``"utility.1,-1,0,0"``,
        ``"rbp.p=0.8"``, ``"iprec_at_recall.0.5"``) and sets (``"official"``,
        ``"all_trec"``, ``"set"``).
    relevance_level : int, default=1
        ``-l``: a document is relevant when its level is >= this. Below 0,
        as trec_eval 10.0: the measures that loop over ranks (``P``,
        ``recall``, ``map``, ``Rprec``, ``recip_rank``, ``success``, ...)
        also count an unjudged document whose code is >= the level (-1: not
        in the qrels, -2: a negative qrels level), while R (``num_rel``) and
        the set measures count judged documents only.
    complete : bool, default=False
        ``-c``: a judged query the run lacks is evaluated on an empty
        ranking; without it such a query is a ``ValueError``, as trec_eval 10
        stops on it.
    judged_only : bool, default=False
        ``-J``: unjudged retrieved documents are dropped before every measure.
    max_retrieved : int or None, default=None
        ``-M``: keep only the best-scored documents of each query.
    n_docs : int, default=0
        ``-N``: documents in the collection (``utility``'s fourth term).

    Returns
    -------
    result : TrecResult
        ``result.qids`` (qrels query ids, bytes order), ``result.per_query``
        and ``result.summary`` keyed by the names trec_eval prints
        (``"P_10"``, ``"iprec_at_recall_0.50"``, ``"ndcg_1=3,2=9"``), in its
        print order; ``result.lines(per_query=True)`` are its output lines.

    Examples
    --------
    >>> from sklearn_rank.trec import trec_eval
    >>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d4": 0.7}, "q2": {"d2": 0.5, "d1": 0.4}}
    >>> result = trec_eval(qrels, run, ["map", "P.2", "num_rel"])
    >>> result.per_query["map"], result.summary["P_2"]
    (array([0.5, 0.5]), 0.5)
    >>> print("\\n".join(result.lines()))
    num_rel               	all	3
    map                   	all	0.5000
    P_2                   	all	0.5000
    """
    from .._evaluate import as_table

    qrels = as_table(qrels, Qrels, read_qrels, "qrels")
    run = as_table(run, Run, read_run, "run")
    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    data = ranked(qrels, run, complete=complete, judged_only=judged_only,
                  max_retrieved=max_retrieved)
    return _compute(data, parsed, relevance_level=int(relevance_level), n_docs=n_docs)
