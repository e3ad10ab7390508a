"""Public ranking metric functions and :func:`evaluate`.

The public functions are thin: they turn their keyword options into a
:class:`~sklearn_rank.metrics.MetricSpec` (validated against the registry's
declared constraints), run the shared engine, and return a plain ``float``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

from ._engine import iter_rankings, prepare
from ._evaluation import Evaluation
from ._kernels import check_labels
from ._registry import MetricSpec, _build, _closest, parse_metric, validate_options

__all__ = [
    "cumulative_gain_score",
    "dcg_score",
    "evaluate",
    "ndcg_score",
]

_EMPTY_VALUE = {"zero": 0.0, "one": 1.0, "skip": np.nan, "nan": np.nan}


def _specs(metrics) -> list[MetricSpec]:
    if isinstance(metrics, str | MetricSpec):
        metrics = [metrics]
    if not isinstance(metrics, Iterable):
        raise TypeError(
            "metrics must be a metric spec or a list of them, e.g. "
            f"metrics=['ndcg@10', 'dcg@5']; got {type(metrics).__name__}."
        )
    specs = [parse_metric(m) for m in metrics]
    if not specs:
        raise ValueError("metrics is empty; name at least one metric, e.g. metrics=['ndcg@10'].")
    return specs


def _check_options(options: dict, specs: list[MetricSpec]) -> None:
    accepted = {p for s in specs for p in s.info.params if p != "k"}
    for name in options:
        if name not in accepted:
            hint = (" Write the cut-off in the spec instead, e.g. 'ndcg@10'." if name == "k"
                    else _closest(name, accepted))
            raise TypeError(
                f"evaluate() got an option {name!r} that none of the metrics "
                f"{[str(s) for s in specs]} takes.{hint} Options they take: "
                f"{', '.join(sorted(accepted))}."
            )
    validate_options(options, "evaluate")


def _compute(data, specs: list[MetricSpec], options: dict) -> Evaluation:
    """Every metric of ``specs`` on prepared data, ranking each block once."""
    keys, todo = [], {}
    for spec in specs:
        key = str(spec)
        resolved = spec.resolve(options)
        if key in todo and todo[key][1] != resolved:
            raise ValueError(
                f"Two metrics print as {key!r} but mean different things once the "
                f"options {sorted(options)} apply; write the differing option in "
                "both specs."
            )
        if key not in todo:
            keys.append(key)
            todo[key] = (spec, resolved)
    for key, (_, p) in todo.items():
        if "gain" in p:
            check_labels(data, p["gain"], key)

    m = data.n_queries
    values = {key: np.empty(m) for key in keys}
    empty = {key: np.empty(m, dtype=bool) for key in keys}
    policies = sorted({p["ties"] for _, p in todo.values()})
    for block in iter_rankings(data, policies):
        for key, (spec, p) in todo.items():
            rank = block[p["ties"]]
            v, e = spec.info.kernel(rank, p, spec.k)
            values[key][rank.segments] = v
            empty[key][rank.segments] = e

    per_query, means, n_empty = {}, {}, {}
    for key, (spec, p) in todo.items():
        v = data.to_query_order(values[key])
        e = data.to_query_order(empty[key])
        per_query[key], means[key], n_empty[key] = _finish(
            key, spec, p["empty"], v, e, data)
    return Evaluation(data.qids, per_query, means, n_empty, data.weights,
                      [todo[k][0] for k in keys])


def _finish(key, spec, policy, values, empty, data):
    """Apply the empty-query policy and average over queries."""
    n_empty = int(empty.sum())
    if n_empty:
        if policy == "raise":
            raise ValueError(
                f"{key}: {n_empty} of {values.shape[0]} queries have no relevant document "
                f"(first: query {data.qids[empty][0].item()!r}) and empty='raise'; choose "
                "empty='zero', 'one', 'skip' or 'nan' to score them."
            )
        values[empty] = _EMPTY_VALUE[policy]
    if policy == "nan" and n_empty:
        return values, float("nan"), n_empty
    counted = ~np.isnan(values)
    weights = data.weights
    total = counted.sum() if weights is None else weights[counted].sum()
    if total == 0:
        warnings.warn(
            f"{key} is undefined: no query is counted (all {n_empty} queries have no "
            "relevant document and empty='skip', or their weights are zero); "
            "returning NaN.", RuntimeWarning, stacklevel=4)
        return values, float("nan"), n_empty
    v = values[counted]
    if spec.info.aggregate == "geometric":
        v = np.log(v)
    mean = v.sum() / total if weights is None else (v * weights[counted]).sum() / total
    if spec.info.aggregate == "geometric":
        mean = np.exp(mean)
    return values, float(mean), n_empty


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
    specs = _specs(metrics)
    _check_options(options, specs)
    data = prepare(y_true, y_score, qid, sample_weight)
    return _compute(data, specs, options)


def _score(name: str, caller: str, y_true, y_score, qid, sample_weight, options) -> float:
    """Thin public function body: validate options, evaluate, return the mean."""
    spec = _build(name, options, caller)
    data = prepare(y_true, y_score, qid, sample_weight)
    return _compute(data, [spec], {}).mean[str(spec)]


_DATA_DOC = """\
    y_true : array-like of shape (n_rows,) or (n_queries, n_docs)
        Graded relevance labels, >= 0.
    y_score : array-like of the same shape as ``y_true``
        Predicted scores; documents are ranked by decreasing score.
    qid : array-like of shape (n_rows,), default=None
        Query id of each row (int, str, object or pandas Series; rows in any
        order). Required for 1-D input; None for the 2-D layout of
        :func:`sklearn.metrics.ndcg_score`, where each row is one query.
    k : int, default=None
        Only the top ``k`` ranks count; None means the whole list. A ``k``
        larger than a query is clipped to its length."""

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
        Value of a query without relevant documents (no positive gain):
        ``'zero'`` (the default; scikit-learn, trec_eval), ``'one'`` (LightGBM,
        XGBoost), ``'skip'`` (left out of the mean), ``'nan'`` (the mean is
        NaN), ``'raise'`` (a ValueError naming the query).
    sample_weight : array-like of shape (n_rows,) or (n_queries,), default=None
        Per-row weights for 1-D input (a query's weight is the mean of its rows'
        weights, LightGBM's rule) or per-query weights for 2-D input. With
        ``empty='one'`` the 1 of an empty query is weighted too.
    convention : {'sklearn', 'lightgbm', 'xgboost'}, default=None
        Preset that reproduces a peer library; explicit options win over it.
        ``'sklearn'``: linear gain, tie-averaged, empty queries 0.
        ``'lightgbm'`` and ``'xgboost'``: exponential gain, stable ties, empty
        queries 1 (XGBoost's ``ndcg@k-``: pass ``empty='zero'``)."""

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
        For NaN or infinite scores or labels, negative labels, labels whose
        exponential gain overflows (>= 1024), mismatched lengths, 1-D input
        without ``qid``, 2-D input with ``qid``, empty input, ``k < 1`` or an
        unknown option value; the message names the argument, the number of
        bad values and the first query concerned."""


def _doc(func):
    func.__doc__ = func.__doc__.format(
        data=_DATA_DOC, gain=_GAIN_DOC, discount=_DISCOUNT_DOC, options=_OPTIONS_DOC,
        returns=_RETURNS_DOC, errors=_ERRORS_DOC)
    return func


@_doc
def cumulative_gain_score(y_true, y_score, *, qid=None, k=None, gain=None, ties=None,
                          empty=None, sample_weight=None, convention=None) -> float:
    """Cumulative gain CG@k: the sum of the gains of the top ``k`` documents.

    Parameters
    ----------
{data}
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

