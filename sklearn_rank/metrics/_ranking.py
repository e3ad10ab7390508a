"""Public ranking metric functions and :func:`evaluate`.

The public functions are thin: they turn their keyword options into a
:class:`~sklearn_rank.metrics.MetricSpec` (validated against the registry's
declared constraints), run the shared engine, and return a plain ``float``.
"""

from __future__ import annotations

from ._engine import prepare
from ._evaluation import Evaluation
from ._plan import Plan
from ._registry import _build

__all__ = [
    "bpref_score",
    "cumulative_gain_score",
    "dcg_score",
    "evaluate",
    "expected_reciprocal_rank_score",
    "f1_at_k_score",
    "gmap_score",
    "hit_rate_score",
    "mean_average_precision_score",
    "mean_reciprocal_rank_score",
    "ndcg_score",
    "precision_at_k_score",
    "r_precision_score",
    "rank_eff_score",
    "recall_at_k_score",
]

def evaluate(y_true, y_score, *, qid=None, metrics=("ndcg@10",), sample_weight=None,
             **options) -> Evaluation:
    """Evaluate several ranking metrics per query, ranking each query once.

    Parameters
    ----------
    y_true : array-like of shape (n_rows,) or (n_queries, n_docs)
        Graded relevance labels (non-negative for gain-based metrics).
    y_score : array-like of the same shape as ``y_true``
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_rows,), default=None
        Query id of each row, of any hashable dtype (int, str, object, pandas
        Series). Rows may come in any order and a query's rows need not be
        contiguous. Required for 1-D input; must be None for the 2-D layout of
        :func:`sklearn.metrics.ndcg_score`, where each row is a query.
    metrics : str, MetricSpec or list of them, default=("ndcg@10",)
        Metric specs such as ``"ndcg@10"``, ``"dcg(gain='linear')@5"`` or
        ``"ndcg@10-"`` (see :func:`parse_metric` and :func:`get_metric_names`).
    sample_weight : array-like of shape (n_rows,) or (n_queries,), default=None
        Per-row weights (1-D layout; a query's weight is the mean of its rows'
        weights, LightGBM's rule) or per-query weights (2-D layout).
    **options
        Options applied to every metric that takes them and does not set them
        in its spec (``gain``, ``discount``, ``log_base``, ``ties``, ``empty``,
        ``convention``). The cut-off belongs in the spec (``"ndcg@10"``).

    Returns
    -------
    evaluation : Evaluation
        Per-query values (``.per_query``), means (``.mean``), ``.qids``,
        ``.n_queries`` and ``.n_empty``, keyed by canonical spec.

    See Also
    --------
    ndcg_score : One metric as a float.
    parse_metric : The spec grammar.

    Notes
    -----
    The inputs are validated and grouped once and every query is ranked once
    per tie policy in use, whatever the number of metrics.

    Examples
    --------
    >>> from sklearn_rank.metrics import evaluate
    >>> y_true = [3, 2, 3, 0, 1, 2, 0, 1]
    >>> y_score = [.9, .8, .7, .6, .5, .4, .2, .1]
    >>> qid = ["a"] * 6 + ["b"] * 2
    >>> ev = evaluate(y_true, y_score, qid=qid, metrics=["ndcg@3", "dcg(gain='linear')"])
    >>> ev.per_query["ndcg@3"].round(4)
    array([0.9595, 0.6309])
    >>> round(ev.mean["ndcg@3"], 4)
    0.7952
    >>> ev.qids
    array(['a', 'b'], dtype='<U1')
    """
    plan = Plan.of(metrics, options, caller="evaluate")
    return plan.evaluate(prepare(y_true, y_score, qid, sample_weight))


def _score(name: str, caller: str, y_true, y_score, qid, sample_weight, options) -> float:
    """Thin public function body: validate options, evaluate, return the mean."""
    spec = _build(name, options, caller)
    data = prepare(y_true, y_score, qid, sample_weight)
    return Plan.resolved([spec]).evaluate(data).mean[str(spec)]


_DATA_DOC = """\
    y_true : array-like of shape (n_rows,) or (n_queries, n_docs)
        Graded relevance labels, >= 0.
    y_score : array-like of the same shape as ``y_true``
        Predicted scores; documents are ranked by decreasing score. Scores
        are ranked as the numbers they are: integers beyond 2**53 (2**60 and
        2**60 + 1 do not tie), Python ints of any size, fractions, decimals.
    qid : array-like of shape (n_rows,), default=None
        Query id of each row (int, str, object or pandas Series; rows in any
        order). Required for 1-D input; None for the 2-D layout of
        :func:`sklearn.metrics.ndcg_score`, where each row is one query."""

_K_DOC = """\
    k : int, default=None
        Only the top ``k`` ranks count; None means the whole list. A ``k``
        larger than a query is clipped to its length."""

_THRESHOLD_DOC = """\
    threshold : float, default=1
        A document is relevant when its label is >= threshold (trec_eval's
        ``-l``). Labels may be any real numbers, negative ones included."""

_CAPPED_DOC = """\
    capped : bool, default=False
        Cap the denominator at what the list allows: P@k divides by min(k, n)
        for a query of n documents (XGBoost's ``pre@k``) instead of k, and
        AP@k by min(R, k) (LightGBM's and XGBoost's ``map@k``) instead of R,
        the number of relevant documents (trec_eval, ranx)."""

_GAIN_DOC = """\
    gain : {'exponential', 'linear'}, mapping, array-like or callable, default=None
        Gain of a label l: ``'exponential'`` is 2**l - 1 (the default),
        ``'linear'`` is l; a mapping ``{label: gain}`` or an array indexed by
        integer labels (LightGBM's ``label_gain``); a callable mapping an array
        of labels to an array of gains. None takes the convention's gain, else
        ``'exponential'``."""

_DISCOUNT_DOC = """\
    discount : {'log2', 'classic'}, array-like or callable, default='log2'
        Discount of rank r: ``'log2'`` is 1 / log_b(r + 1) (the standard
        discount); ``'classic'`` is Järvelin & Kekäläinen's 1 / max(1, log_b r),
        under which ranks 1..b are not discounted; an array gives
        ``discount[r - 1]``; a callable maps an array of ranks to discounts.
    log_base : float, default=2
        The base b of the logarithm in the discount."""

_OPTIONS_DOC = """\
    ties : {'average', 'stable', 'pessimistic', 'optimistic'}, default=None
        Order of documents with equal scores. ``'average'`` (the default) is the
        expected value over all orderings of tied documents (McSherry & Najork,
        2008), as :func:`sklearn.metrics.ndcg_score`; a tie group straddling the
        cut-off counts in proportion. ``'stable'`` keeps input order within a
        query (LightGBM, XGBoost). ``'pessimistic'`` / ``'optimistic'`` put the
        least / most relevant tied documents first (bounds on the metric).
    empty : {'zero', 'one', 'skip', 'nan', 'raise'}, default=None
        Value of a query without relevant documents (no positive gain, or no
        label >= threshold):
        ``'zero'`` (the default; scikit-learn, trec_eval), ``'one'`` (LightGBM,
        XGBoost), ``'skip'`` (left out of the mean), ``'nan'`` (the mean is
        NaN), ``'raise'`` (a ValueError naming the query).
    sample_weight : array-like of shape (n_rows,) or (n_queries,), default=None
        Per-row weights for 1-D input (a query's weight is the mean of its rows'
        weights, LightGBM's rule) or per-query weights for 2-D input. With
        ``empty='one'`` the 1 of an empty query is weighted too.
    convention : {'sklearn', 'lightgbm', 'xgboost', 'trec_eval'}, default=None
        Preset that reproduces a peer library's version of the metric;
        explicit options win over it. ``'sklearn'``: linear gain, tie-averaged,
        empty queries 0. ``'lightgbm'`` and ``'xgboost'``: exponential gain,
        stable ties; for NDCG and MAP empty queries score 1 (XGBoost's
        ``ndcg@k-`` / ``map@k-``: pass ``empty='zero'``), for MAP and XGBoost's
        precision ``capped=True``. ``'trec_eval'``: linear gain, empty queries
        0, ties in input order (:func:`sklearn_rank.trec.evaluate_run` breaks
        them by document id, as trec_eval)."""

_RETURNS_DOC = """\
    Returns
    -------
    score : float
        The (weighted) mean over queries. Per-query values come from
        :func:`evaluate`."""

_ERRORS_DOC = """\
    Raises
    ------
    ValueError
        For NaN or infinite scores or labels, negative labels, a value
        beyond float64 (a DCG or CG above about 1.8e308; NDCG and ERR are
        computed scale-free and never overflow), mismatched lengths, 1-D input
        without ``qid``, 2-D input with ``qid``, empty input, ``k < 1`` or an
        unknown option value; the message names the argument, the number of
        bad values and the first query concerned."""


def _doc(func):
    if func.__doc__:  # None under python -OO
        func.__doc__ = func.__doc__.format(
            data=_DATA_DOC, k=_K_DOC, gain=_GAIN_DOC, discount=_DISCOUNT_DOC,
            options=_OPTIONS_DOC, threshold=_THRESHOLD_DOC, capped=_CAPPED_DOC,
            returns=_RETURNS_DOC, errors=_ERRORS_DOC)
    return func


@_doc
def cumulative_gain_score(y_true, y_score, *, qid=None, k=None, gain=None, ties=None,
                          empty=None, sample_weight=None, convention=None) -> float:
    """Cumulative gain CG@k: the sum of the gains of the top ``k`` documents.

    Parameters
    ----------
{data}
{k}
{gain}
{options}

{returns}

{errors}

    See Also
    --------
    dcg_score : CG with a rank discount.
    evaluate : Several metrics and per-query values at once.

    Notes
    -----
    CG@k = sum over ranks r <= k of g(l_r), the gain of the label at rank r.
    Spec: ``"cg@k"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import cumulative_gain_score
    >>> cumulative_gain_score([[3, 2, 3, 0, 1, 2]], [[6, 5, 4, 3, 2, 1]], k=3,
    ...                       gain="linear")
    8.0
    """
    return _score("cg", "cumulative_gain_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, gain=gain, ties=ties, empty=empty, convention=convention))


@_doc
def dcg_score(y_true, y_score, *, qid=None, k=None, gain=None, discount="log2",
              log_base=2, ties=None, empty=None, sample_weight=None,
              convention=None) -> float:
    """Discounted cumulative gain DCG@k, averaged over queries.

    Parameters
    ----------
{data}
{k}
{gain}
{discount}
{options}

{returns}

{errors}

    See Also
    --------
    ndcg_score : DCG normalised by the ideal DCG.
    evaluate : Several metrics and per-query values at once.

    Notes
    -----
    DCG@k = sum over ranks r <= k of g(l_r) * d(r). With ``gain='linear'`` it
    equals :func:`sklearn.metrics.dcg_score` (``convention='sklearn'``).
    Spec: ``"dcg@k"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import dcg_score
    >>> round(dcg_score([[3, 2, 3, 0, 1, 2]], [[6, 5, 4, 3, 2, 1]],
    ...                 convention="sklearn"), 6)
    6.861127
    """
    return _score("dcg", "dcg_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, gain=gain, discount=discount, log_base=log_base, ties=ties,
                       empty=empty, convention=convention))


@_doc
def ndcg_score(y_true, y_score, *, qid=None, k=None, gain=None, discount="log2",
               log_base=2, ties=None, empty=None, sample_weight=None,
               convention=None) -> float:
    """Normalized discounted cumulative gain NDCG@k, averaged over queries.

    Parameters
    ----------
{data}
{k}
{gain}
{discount}
{options}

{returns}

{errors}

    See Also
    --------
    dcg_score : The unnormalised DCG.
    evaluate : Several metrics and per-query values at once.
    sklearn.metrics.ndcg_score : The same with ``convention='sklearn'``.

    Notes
    -----
    NDCG@k = DCG@k / IDCG@k, where DCG@k = sum over ranks r <= k of
    g(l_r) * d(r) and IDCG@k is the DCG@k of the same query's documents sorted
    by decreasing gain. A query whose IDCG is 0 has no relevant document; its
    value is set by ``empty``. Every query counts once (weighted by its
    ``sample_weight``), whatever its length. Spec: ``"ndcg@k"``.

    NDCG is a ratio, so it is computed scale-free: a query whose largest gain
    (or the largest discount) lies outside [2**-400, 2**400] has its gains
    divided by a power of two near it (exact). Any finite gain works,
    exponential gains of labels >= 1024 included, where DCG and CG, whose
    values would exceed float64, raise a ValueError.

    What "NDCG@10" means differs between libraries; ``convention`` reproduces
    them exactly: scikit-learn uses linear gain and tie averaging, LightGBM and
    XGBoost exponential gain, input order for ties and 1 for empty queries.
    XGBoost's bare ``"ndcg"`` metric is NDCG@32, not the whole list: compare it
    with ``k=32``.

    References
    ----------
    Järvelin, K., & Kekäläinen, J. (2002). Cumulated gain-based evaluation of
    IR techniques. ACM TOIS 20(4), 422-446.

    McSherry, F., & Najork, M. (2008). Computing information retrieval
    performance measures efficiently in the presence of tied scores. ECIR.

    Examples
    --------
    >>> from sklearn_rank.metrics import ndcg_score
    >>> y_true = [3, 2, 3, 0, 1, 2]
    >>> y_score = [6, 5, 4, 3, 2, 1]
    >>> qid = [7, 7, 7, 7, 7, 7]
    >>> round(ndcg_score(y_true, y_score, qid=qid), 6)
    0.948811
    >>> round(ndcg_score(y_true, y_score, qid=qid, gain="linear"), 6)
    0.960808
    >>> round(ndcg_score(y_true, y_score, qid=qid, gain="linear", discount="classic"), 6)
    0.931509

    Ties are averaged over all orderings, as in scikit-learn:

    >>> round(ndcg_score([[1, 0, 0, 0]], [[1, 1, 1, 0]]), 6)
    0.71031
    >>> ndcg_score([[1, 0, 0, 0]], [[1, 1, 1, 0]], convention="lightgbm")
    1.0
    """
    return _score("ndcg", "ndcg_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, gain=gain, discount=discount, log_base=log_base, ties=ties,
                       empty=empty, convention=convention))



@_doc
def precision_at_k_score(y_true, y_score, *, qid=None, k=None, threshold=1, capped=None,
                         ties=None, empty=None, sample_weight=None, convention=None) -> float:
    """Precision@k: the fraction of the top ``k`` documents that are relevant.

    Parameters
    ----------
{data}
{k}
{threshold}
{capped}
{options}

{returns}

{errors}

    See Also
    --------
    recall_at_k_score, f1_at_k_score, r_precision_score

    Notes
    -----
    P@k = (number of relevant documents in the top k) / k. A list shorter
    than k counts its missing ranks as non-relevant (trec_eval's ``P_k``); ``capped=True``
    divides by min(k, n) instead (XGBoost's ``pre@k``). Without ``k`` the whole
    list counts (XGBoost's bare ``pre`` is ``pre@32``: pass ``k=32``). Spec:
    ``"p@k"`` (alias ``precision``).

    Examples
    --------
    >>> from sklearn_rank.metrics import precision_at_k_score
    >>> precision_at_k_score([[1, 0, 2, 0]], [[4, 3, 2, 1]], k=2)
    0.5
    >>> precision_at_k_score([[1, 0, 2, 0]], [[4, 3, 2, 1]], k=2, threshold=2)
    0.0
    """
    return _score("p", "precision_at_k_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, threshold=threshold, capped=capped, ties=ties, empty=empty,
                       convention=convention))


@_doc
def recall_at_k_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties=None,
                      empty=None, sample_weight=None, convention=None) -> float:
    """Recall@k: the fraction of a query's relevant documents in the top ``k``.

    Parameters
    ----------
{data}
{k}
{threshold}
{options}

{returns}

{errors}

    See Also
    --------
    precision_at_k_score, f1_at_k_score

    Notes
    -----
    recall@k = (number of relevant documents in the top k) / R, R the number
    of relevant documents of the query (trec_eval's ``recall_k``). A query with R = 0 is
    empty (see ``empty``). Spec: ``"recall@k"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import recall_at_k_score
    >>> recall_at_k_score([[1, 0, 2, 0]], [[4, 3, 2, 1]], k=2)
    0.5
    """
    return _score("recall", "recall_at_k_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, threshold=threshold, ties=ties, empty=empty,
                       convention=convention))


@_doc
def f1_at_k_score(y_true, y_score, *, qid=None, k=None, threshold=1, capped=None, ties=None,
                  empty=None, sample_weight=None, convention=None) -> float:
    """F1@k: the harmonic mean of precision@k and recall@k.

    Parameters
    ----------
{data}
{k}
{threshold}
{capped}
{options}

{returns}

{errors}

    See Also
    --------
    precision_at_k_score, recall_at_k_score

    Notes
    -----
    F1@k = 2 P R / (P + R) = 2 (number relevant in the top k) / (k + R), with
    P's denominator min(k, n) when ``capped``; 0 when nothing relevant is retrieved.
    Spec: ``"f1@k"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import f1_at_k_score
    >>> f1_at_k_score([[1, 0, 2, 0]], [[4, 3, 2, 1]], k=2)
    0.5
    """
    return _score("f1", "f1_at_k_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, threshold=threshold, capped=capped, ties=ties, empty=empty,
                       convention=convention))


@_doc
def hit_rate_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties=None, empty=None,
                   sample_weight=None, convention=None) -> float:
    """Hit rate@k (success@k): the fraction of queries with a relevant document in the top k.

    Parameters
    ----------
{data}
{k}
{threshold}
{options}

{returns}

{errors}

    See Also
    --------
    mean_reciprocal_rank_score

    Notes
    -----
    hit_rate@k = 1 if any of the top k documents is relevant, else 0
    (trec_eval's ``success_k``). Under ``ties="average"`` a tie group straddling
    k contributes the probability that one of its relevant documents lands in
    the top k, 1 - C(g - h, m) / C(g, m) for m of its g places in the top k
    and h relevant members: O(min(g, k)) per group. Spec: ``"hit_rate@k"``
    (alias ``success``).

    Examples
    --------
    >>> from sklearn_rank.metrics import hit_rate_score
    >>> hit_rate_score([0, 0, 1, 0, 1], [5, 4, 3, 2, 1], qid=[1, 1, 1, 2, 2], k=2)
    0.5
    """
    return _score("hit_rate", "hit_rate_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, threshold=threshold, ties=ties, empty=empty,
                       convention=convention))


@_doc
def r_precision_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
                      sample_weight=None, convention=None) -> float:
    """R-precision: precision at rank R, the number of relevant documents of the query.

    Parameters
    ----------
{data}
{threshold}
{options}

{returns}

{errors}

    See Also
    --------
    precision_at_k_score

    Notes
    -----
    R-precision = (number of relevant documents in the top R) / R
    (trec_eval's ``Rprec``); a query with R = 0 is empty. Spec: ``"r_precision"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import r_precision_score
    >>> r_precision_score([[1, 0, 2, 0]], [[4, 3, 2, 1]])
    0.5
    """
    return _score("r_precision", "r_precision_score", y_true, y_score, qid, sample_weight,
                  dict(threshold=threshold, ties=ties, empty=empty, convention=convention))


@_doc
def mean_average_precision_score(y_true, y_score, *, qid=None, k=None, threshold=1,
                                 capped=None, ties=None, empty=None, sample_weight=None,
                                 convention=None) -> float:
    """Mean average precision (MAP@k) over queries.

    Parameters
    ----------
{data}
{k}
{threshold}
{capped}
{options}

{returns}

{errors}

    See Also
    --------
    gmap_score : The geometric mean of the same AP values.

    Notes
    -----
    AP@k = (1/D) sum over relevant ranks r <= k of P@r, with D = R, the number
    of relevant documents of the query (trec_eval's ``map`` / ``map_cut_k``,
    ranx), or D = min(R, k) with ``capped=True`` (LightGBM's and XGBoost's
    ``map@k``). A query with R = 0 is empty: 0 by default, 1 under the
    LightGBM/XGBoost conventions (XGBoost's bare ``map`` is ``map@32``: pass
    ``k=32``). Under ``ties="average"`` the value is the
    exact expectation over tie orderings (McSherry & Najork, 2008). Spec:
    ``"map@k"``, ``"map"`` (alias ``ap``).

    Examples
    --------
    >>> from sklearn_rank.metrics import mean_average_precision_score
    >>> round(mean_average_precision_score([[1, 0, 1, 0]], [[4, 3, 2, 1]]), 6)
    0.833333
    >>> mean_average_precision_score([[0, 0, 1, 1]], [[4, 3, 2, 1]], k=3)  # (1/3) / R
    0.16666666666666666
    >>> mean_average_precision_score([[1, 0, 1, 1]], [[4, 3, 2, 1]], k=2)  # 1 / R
    0.3333333333333333
    >>> mean_average_precision_score([[1, 0, 1, 1]], [[4, 3, 2, 1]], k=2, capped=True)
    0.5
    """
    return _score("map", "mean_average_precision_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, threshold=threshold, capped=capped, ties=ties, empty=empty,
                       convention=convention))


@_doc
def gmap_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
               sample_weight=None, convention=None) -> float:
    """Geometric mean average precision (GMAP), trec_eval's ``gm_map``.

    Parameters
    ----------
{data}
{threshold}
{options}

    Returns
    -------
    score : float
        exp of the (weighted) mean over queries of log(max(AP, 1e-5)).

{errors}

    See Also
    --------
    mean_average_precision_score

    Notes
    -----
    GMAP = exp(mean(log(max(AP_q, 1e-5)))): the 1e-5 floor (trec_eval's) keeps
    a query with AP 0 from making the mean 0. The per-query values that
    :func:`evaluate` reports are the AP values themselves. Spec: ``"gmap"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import gmap_score
    >>> round(gmap_score([1, 0, 0, 1], [2, 1, 2, 1], qid=[1, 1, 2, 2]), 6)
    0.707107
    """
    return _score("gmap", "gmap_score", y_true, y_score, qid, sample_weight,
                  dict(threshold=threshold, ties=ties, empty=empty, convention=convention))


@_doc
def mean_reciprocal_rank_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties=None,
                               empty=None, sample_weight=None, convention=None) -> float:
    """Mean reciprocal rank (MRR@k) of the first relevant document.

    Parameters
    ----------
{data}
{k}
{threshold}
{options}

{returns}

{errors}

    See Also
    --------
    hit_rate_score, expected_reciprocal_rank_score

    Notes
    -----
    RR@k = 1 / r for the rank r of the first relevant document if r <= k, else
    0 (trec_eval's ``recip_rank``). Under ``ties="average"`` it is the exact
    expectation over tie orderings: only the first tie group with a relevant
    document counts, its first relevant member at position j with probability
    (h / g) prod_{{i<j}} (g - h - i) / (g - 1 - i), summed in O(min(g, k)) and
    cut where the rest is provably below 2**-54 of the value. Spec:
    ``"mrr@k"``, ``"mrr"`` (alias ``rr``).

    Examples
    --------
    >>> from sklearn_rank.metrics import mean_reciprocal_rank_score
    >>> mean_reciprocal_rank_score([0, 1, 0, 0, 0, 1], [3, 2, 1, 3, 2, 1], qid=[1, 1, 1, 2, 2, 2])
    0.41666666666666663
    """
    return _score("mrr", "mean_reciprocal_rank_score", y_true, y_score, qid, sample_weight,
                  dict(k=k, threshold=threshold, ties=ties, empty=empty,
                       convention=convention))


@_doc
def expected_reciprocal_rank_score(y_true, y_score, *, qid=None, k=None, max_grade=4,
                                   ties=None, empty=None, sample_weight=None,
                                   convention=None) -> float:
    """Expected reciprocal rank (ERR@k) of Chapelle et al. (2009).

    Parameters
    ----------
{data}
{k}
    max_grade : float, default=4
        The highest relevance grade; every label must lie in [0, max_grade].
{options}

{returns}

{errors}

    See Also
    --------
    mean_reciprocal_rank_score : ERR with binary stop probabilities.

    Notes
    -----
    A user scans the ranking and stops at rank r with probability
    R_r = (2**l_r - 1) / 2**max_grade:
    ERR@k = sum over r <= k of (1/r) R_r prod_{{i<r}} (1 - R_i). A query whose
    labels are all 0 is empty. R_r is computed as 2**(l_r - max_grade) -
    2**-max_grade, so any ``max_grade`` works (a probability below 2**-1074
    is 0). Spec: ``"err@k"``.

    Under ``ties="average"`` the value is the expectation over tie orderings,
    computed per tie group from its p documents with a positive stop
    probability and the law of their positions (documents with R = 0 only
    shift them), in O(p D + D Y) for a group: D <= min(p, k - a) is the
    number of those documents the user can reach, a the group's first rank,
    and Y <= min(group size, k - a) the positions looked at. Both are cut where
    the mass left is provably below 2**-54 of the query's value (exact to
    float64 precision). With integer grades and the default max_grade=4, D
    stays below a few hundred whatever the group size; stop probabilities
    close to 0 (large max_grade, fractional grades) make D grow like 40 / R,
    up to O(g min(g, k)) for a group of g documents.

    References
    ----------
    Chapelle, O., Metzler, D., Zhang, Y., & Grinspan, P. (2009). Expected
    reciprocal rank for graded relevance. CIKM.

    Examples
    --------
    >>> from sklearn_rank.metrics import expected_reciprocal_rank_score
    >>> round(expected_reciprocal_rank_score([[4, 0, 2]], [[3, 2, 1]]), 6)
    0.941406
    """
    return _score("err", "expected_reciprocal_rank_score", y_true, y_score, qid,
                  sample_weight, dict(k=k, max_grade=max_grade, ties=ties, empty=empty,
                                      convention=convention))


@_doc
def rank_eff_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
                   sample_weight=None, convention=None) -> float:
    """RankEff (Ahlgren & Grönqvist, 2008): relevant documents penalised by the
    non-relevant documents ranked above them.

    Parameters
    ----------
{data}
{threshold}
{options}

{returns}

{errors}

    See Also
    --------
    mean_average_precision_score

    Notes
    -----
    RankEff = (1/R) sum over relevant documents d of (1 - (number of non-relevant
    ranked above d) / N), with R the relevant and N the non-relevant (judged)
    documents of the query. A query without non-relevant documents scores 1;
    one without relevant documents is empty. Under ``ties="average"`` a tied
    (relevant, non-relevant) pair counts one half. Spec: ``"rank_eff"``.

    References
    ----------
    Ahlgren, P., & Grönqvist, L. (2008). Evaluation of retrieval effectiveness
    with incomplete relevance data: theoretical and experimental comparison of
    three measures. Information Processing & Management 44(1), 212-225.

    Examples
    --------
    >>> from sklearn_rank.metrics import rank_eff_score
    >>> rank_eff_score([[1, 0, 1, 0]], [[4, 3, 2, 1]])
    0.75
    """
    return _score("rank_eff", "rank_eff_score", y_true, y_score, qid, sample_weight,
                  dict(threshold=threshold, ties=ties, empty=empty, convention=convention))


@_doc
def bpref_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
                sample_weight=None, convention=None) -> float:
    """Binary preference (bpref, Buckley & Voorhees 2004), trec_eval's definition.

    Parameters
    ----------
{data}
{threshold}
{options}

{returns}

{errors}

    See Also
    --------
    rank_eff_score : A close relative over all judged non-relevant documents.
    sklearn_rank.trec.evaluate_run : With unjudged documents, as in TREC runs.

    Notes
    -----
    bpref = (1/R) sum over relevant retrieved documents d of
    (1 - min(number of judged non-relevant above d, R) / min(N, R)), with R
    the relevant and N the judged non-relevant documents of the query (a document
    above d counts only when N > 0). Unjudged documents are skipped, which
    matters for TREC runs (:func:`~sklearn_rank.trec.evaluate_run`); in arrays
    every document is judged. Under ``ties="average"`` the value is the exact
    expectation over tie orderings, in closed form per tie group (O(1) each:
    a relevant member has each number 0..n of the group's n non-relevant
    members above it with probability 1 / (n + 1)). Spec: ``"bpref"``.

    References
    ----------
    Buckley, C., & Voorhees, E. M. (2004). Retrieval evaluation with incomplete
    information. SIGIR.

    Examples
    --------
    >>> from sklearn_rank.metrics import bpref_score
    >>> bpref_score([[1, 0, 1, 0]], [[4, 3, 2, 1]])
    0.75
    """
    return _score("bpref", "bpref_score", y_true, y_score, qid, sample_weight,
                  dict(threshold=threshold, ties=ties, empty=empty, convention=convention))
