"""Fusion of runs: :func:`fuse` (tables in, a :class:`~sklearn_rank.trec.Run` out) and
:func:`fuse_scores` (several models' scores of the same rows in, fused scores out).

Both are thin: :func:`fused_values` computes the fused score of each pair of a
:class:`~sklearn_rank.fusion._inputs.Stack`; :func:`~sklearn_rank.fusion.fuse_cv` calls it
for every candidate weight vector."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from numbers import Real

import numpy as np

from .._utils.validation import Interval, validate_params
from ..trec import Run
from ._inputs import Stack, stacked
from ._methods import Groups, NormError, method_of, norm_name, normalized, ranks

__all__ = ["fuse", "fuse_scores", "fused_values"]

_CONSTRAINTS = {
    "runs": [Iterable, Mapping],
    "method": [str],
    "norm": [str, None],
    "weights": ["array-like", None],
    "k": [Interval(Real, 0, None, closed="left")],
}


def _weights(weights, stack: Stack, method) -> np.ndarray:
    n_runs = len(stack.names)
    if weights is None:
        return np.ones(n_runs)
    if not method.weighted:
        raise ValueError(f"method={method.name!r} takes no weights; the weighted methods are "
                         "'wsum', 'wmnz' and 'rrf' (weighted RRF).")
    if isinstance(weights, Mapping):
        unknown = set(map(str, weights)) - set(stack.names)
        if unknown or len(weights) != n_runs:
            raise ValueError(f"weights must give one weight to each run {stack.names}; got "
                             f"the keys {sorted(map(str, weights))}.")
        weights = [weights[name] for name in stack.names]
    try:
        values = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("weights must be numbers, one per run.") from None
    if values.shape != (n_runs,) or not np.isfinite(values).all():
        raise ValueError(f"weights must be {n_runs} finite numbers, one per run "
                         f"{stack.names}; got {weights!r}.")
    return values


def fused_values(stack: Stack, method: str = "rrf", *, norm: str | None = "min-max",
                 weights=None, k: float = 60) -> np.ndarray:
    """The fused score of each pair of ``stack`` (the parameters as :func:`fuse`'s)."""
    found = method_of(method, k)
    norm = norm_name(norm)
    w = _weights(weights, stack, found)
    values = np.full(stack.scores.shape, np.nan)
    for j, name in enumerate(stack.names):
        present = ~np.isnan(stack.scores[:, j])
        query, scores = stack.query[present], stack.scores[present, j]
        rank = ranks(scores, query, stack.tiebreak[present])
        if found.on_ranks:
            values[present, j] = rank
            continue
        try:
            values[present, j] = normalized(norm, scores, query, rank)
        except NormError as error:
            qid = stack.qid_text(query[Groups.of(query).starts[error.group]])
            raise ValueError(
                f"norm={error.norm!r} divides by the largest score of a query, which must be "
                f"> 0: run {name!r} has {error.value!r} for query {qid!r}; use "
                "norm='min-max' (or 'zmuv', 'sum', 'rank') for scores that can be <= 0."
            ) from None
    return found.combine(values, w)


@validate_params({**_CONSTRAINTS, "name": [str]})
def fuse(runs, method: str = "rrf", *, norm: str | None = "min-max", weights=None,
         k: float = 60, name: str = "fused") -> Run:
    """Fuse runs into one: reciprocal rank fusion, CombSUM, CombMNZ and the others.

    Each run is normalised query by query (``norm``), then each retrieved (query,
    document) pair gets the fused score of ``method`` from the runs that retrieve it.
    The definitions and names are ranx's (``ranx.fuse(runs, norm=..., method=...)``),
    and on the same runs the fused scores are ranx's.

    Parameters
    ----------
    runs : list or dict of str -> Run, DataFrame, dict or path
        Two runs or more: :class:`~sklearn_rank.trec.Run` tables, DataFrames in
        PyTerrier's (``qid, docno, score``) or ir_measures' (``query_id, doc_id,
        score``) layout, ``{qid: {docno: score}}`` dicts, or run files. A dict of
        runs names them (the names ``weights`` may use); a list uses each Run's name.
        The runs need not retrieve the same queries or documents: a run that does not
        retrieve a document adds nothing to its score.
    method : str, default="rrf"
        ``"rrf"``: sum of ``w / (k + rank)`` (Cormack et al., 2009), weighted when
        ``weights`` are given (the weighted RRF of LlamaIndex and others);
        ``"sum"`` (CombSUM), ``"mnz"`` (CombMNZ: sum x number of runs retrieving the
        document), ``"max"``, ``"min"``, ``"med"`` (CombMAX/MIN/MED over the runs
        retrieving it), ``"anz"`` (CombANZ: their mean); ``"wsum"``: sum of ``w x
        score``; ``"wmnz"``: sum of the scores x sum of the weights of the runs
        retrieving the document. ``"CombSUM"``, ``"comb_mnz"``, ... name the same.
    norm : {"min-max", "max", "sum", "zmuv", "rank"} or None, default="min-max"
        Normalisation of each run's scores of each query before fusion:
        ``(s - min) / (max - min)``; ``s / max`` (the maximum must be > 0);
        ``(s - min) / sum(s - min)``; ``(s - mean) / std`` (``"z-score"`` too);
        ``1 - (rank - 1) / n``. A query whose scores are all equal gets 0 from
        ``"min-max"``, ``"sum"`` and ``"zmuv"``. RRF uses the ranks and no scores, so
        ``norm`` does not change it.
    weights : array-like of shape (n_runs,) or dict of str -> float, default=None
        One weight per run (or by run name) for ``"wsum"``, ``"wmnz"`` and ``"rrf"``;
        all 1 by default. :func:`fuse_cv` chooses them by cross-validation.
    k : float, default=60
        RRF's constant.
    name : str, default="fused"
        The fused run's name.

    Returns
    -------
    Run
        One row per (query, document) pair any run retrieves, each query's rows by
        decreasing fused score.

    See Also
    --------
    fuse_scores : The same on several models' scores of the same rows.
    fuse_cv : Weights chosen by cross-validation over whole queries.

    Notes
    -----
    Ranks are by decreasing score, equal scores in trec_eval's order (decreasing
    document id), as everywhere in :mod:`sklearn_rank.trec`; ranx breaks ties in an
    order of its own, so on runs with tied scores ``"rrf"`` and ``"rank"`` can differ
    from ranx's. A normalisation whose denominator (max - min, the sum, the standard
    deviation) is 0 gives 0, as ranx's; ranx also raises a denominator below 1e-9 to
    1e-9, which is not done here (the scores are divided by their real range).
    ranx requires the runs to hold the same queries; here a query is fused from the
    runs that retrieve it.

    References
    ----------
    G. V. Cormack, C. L. A. Clarke and S. Buettcher, "Reciprocal rank fusion outperforms
    Condorcet and individual rank learning methods", SIGIR 2009.
    E. A. Fox and J. A. Shaw, "Combination of multiple searches", TREC-2, 1993.

    Examples
    --------
    >>> from sklearn_rank.fusion import fuse
    >>> bm25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 7.0}}
    >>> dense = {"q1": {"d3": 0.91, "d1": 0.84, "d4": 0.80}}
    >>> fused = fuse({"bm25": bm25, "dense": dense}, method="rrf", k=60)
    >>> fused.docno.tolist(), fused.score.round(5).tolist()
    (['d1', 'd3', 'd2', 'd4'], [0.03252, 0.03227, 0.01613, 0.01587])
    >>> fused = fuse({"bm25": bm25, "dense": dense}, method="wsum", norm="min-max",
    ...              weights={"bm25": 0.3, "dense": 0.7})
    >>> fused.docno.tolist()
    ['d3', 'd1', 'd2', 'd4']
    """
    stack = stacked(runs)
    values = fused_values(stack, method, norm=norm, weights=weights, k=k)
    order = np.lexsort((-stack.tiebreak, -values, stack.query))
    return Run(stack.qids[stack.query[order]], stack.docno[order], values[order], name=name)


@validate_params({**_CONSTRAINTS, "qid": ["array-like"]})
def fuse_scores(runs, method: str = "rrf", *, qid, norm: str | None = "min-max",
                weights=None, k: float = 60) -> np.ndarray:
    """Fuse several models' scores of the same rows (flat rows with a query id each).

    Parameters
    ----------
    runs : list or dict of str -> array-like of shape (n_rows,)
        Two score arrays or more, each scoring the same rows (e.g. several rankers'
        ``predict`` on one test set).
    method, norm, weights, k
        As :func:`fuse`'s. Every run scores every row, so ``"sum"``, ``"mnz"`` and
        ``"anz"`` rank alike, as do ``"wsum"`` and ``"wmnz"``.
    qid : array-like of shape (n_rows,)
        The query id of each row; ranks and normalisations are per query.

    Returns
    -------
    ndarray of shape (n_rows,)
        The fused score of each row, in the rows' order.

    Notes
    -----
    Equal scores of a query are ranked in the order of the rows (the earlier first),
    which matters for ``"rrf"`` and ``norm="rank"`` only.

    Examples
    --------
    >>> from sklearn_rank.fusion import fuse_scores
    >>> qid = [1, 1, 1, 2, 2]
    >>> fuse_scores([[3.0, 2.0, 1.0, 0.5, 0.7], [0.1, 0.9, 0.5, 2.0, 1.0]], "sum",
    ...             qid=qid, norm="min-max").round(3)
    array([1. , 1.5, 0.5, 1. , 1. ])
    """
    stack = stacked(runs, qid, flat=True)
    values = fused_values(stack, method, norm=norm, weights=weights, k=k)
    out = np.empty_like(values)
    out[stack.rows] = values
    return out
