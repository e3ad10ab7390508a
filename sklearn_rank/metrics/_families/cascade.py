"""Cascade metrics: hit rate, reciprocal rank and ERR.

A user scans the ranking and stops at each document with a probability (1
at the first relevant document for hit rate and reciprocal rank; ERR's
(2**l - 1) / 2**max_grade); a stop at rank r earns a weight of r. Under
``ties="average"`` the exact expectation over tie orderings comes from
:func:`~sklearn_rank.metrics._engine.ties.cascade_ties`. Each metric is its kernel, its
:class:`~sklearn_rank.metrics._definition.Metric` declaration and its public function; importing
the module registers them.
"""

from __future__ import annotations

import numpy as np

from .._definition import Metric, metric_function
from .._engine.blocks import rowdot
from .._engine.columns import POSITIVE, StopProbability
from .._engine.ranking import ranked_relevant
from .._engine.ties import cascade_ties

__all__ = ["hit_rate_score", "mean_reciprocal_rank_score", "expected_reciprocal_rank_score"]


_BINARY = ("threshold", "ties", "empty", "convention")


def _cascade(rank, col, weights) -> np.ndarray:
    """Sum over ranks r of weights[r - 1] * P(the user stops at r).

    A user scans the ranking and stops at each document with probability
    ``col`` (ERR's cascade; for binary flags, at the first relevant
    document). Under ``ties="average"`` the value is the exact expectation
    over the orderings of tied documents (:func:`~sklearn_rank.metrics._engine.ties.cascade_ties`).
    """
    cut = weights.shape[0]
    stop = rank.ranked(col, cut)
    reach = np.ones_like(stop)
    np.cumprod(1.0 - stop[:, :-1], axis=1, out=reach[:, 1:])
    value = rowdot(stop * reach, weights)
    if rank.tied:
        value[rank.tie_rows] = cascade_ties(rank, col, weights)
    return value


def _binary_cascade(rank, p, k, weights_of):
    """A cascade with 0/1 stop probabilities: the weight of the first relevant rank."""
    relevant = ranked_relevant(p)
    cut = rank.cut(k)
    weights = weights_of(cut)
    first = rank.first(relevant, cut)  # (a tied block: the tie rows are replaced below)
    value = np.where(first >= 0, weights[np.maximum(first, 0)], 0.0)
    if rank.tied:
        value[rank.tie_rows] = cascade_ties(rank, relevant, weights, binary=True)
    return value, rank.count(relevant) == 0


def _hit_rate(rank, p, k):
    return _binary_cascade(rank, p, k, np.ones)


def _reciprocal_rank(rank, p, k):
    return _binary_cascade(rank, p, k, lambda cut: 1.0 / np.arange(1, cut + 1))


def _err(rank, p, k):
    cut = rank.cut(k)
    value = _cascade(rank, StopProbability(p["max_grade"]), 1.0 / np.arange(1, cut + 1))
    return value, rank.unranked(POSITIVE).sum(axis=1) == 0


HIT_RATE = Metric(
    "hit_rate", "1 if a relevant document is in the top k (success@k)",
    params=("k", *_BINARY), capabilities={"binary", "cutoff", "bounded", "normalised"},
    kernel=_hit_rate, aliases=("success",))


@metric_function(HIT_RATE)
def hit_rate_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties=None, empty=None,
                   sample_weight=None, convention=None) -> float:
    """Hit rate@k (success@k): the fraction of queries with a relevant document in the top k.

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


MRR = Metric(
    "mrr", "mean reciprocal rank of the first relevant document within k",
    params=("k", *_BINARY), capabilities={"binary", "cutoff", "bounded", "normalised"},
    kernel=_reciprocal_rank, aliases=("rr",))


@metric_function(MRR)
def mean_reciprocal_rank_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties=None,
                               empty=None, sample_weight=None, convention=None) -> float:
    """Mean reciprocal rank (MRR@k) of the first relevant document.

    See Also
    --------
    hit_rate_score, expected_reciprocal_rank_score

    Notes
    -----
    RR@k = 1 / r for the rank r of the first relevant document if r <= k, else
    0 (trec_eval's ``recip_rank``). Under ``ties="average"`` it is the exact
    expectation over tie orderings: only the first tie group with a relevant
    document counts, its first relevant member at position j with probability
    (h / g) prod_{i<j} (g - h - i) / (g - 1 - i), summed in O(min(g, k)) and
    cut where the rest is provably below 2**-54 of the value. Spec:
    ``"mrr@k"``, ``"mrr"`` (alias ``rr``).

    Examples
    --------
    >>> from sklearn_rank.metrics import mean_reciprocal_rank_score
    >>> mean_reciprocal_rank_score([0, 1, 0, 0, 0, 1], [3, 2, 1, 3, 2, 1], qid=[1, 1, 1, 2, 2, 2])
    0.41666666666666663
    """


ERR = Metric(
    "err", "expected reciprocal rank (Chapelle et al., 2009), stop probability "
    "(2**l - 1) / 2**max_grade",
    params=("k", "max_grade", "ties", "empty", "convention"),
    capabilities={"graded", "cutoff", "bounded"},
    kernel=_err)


@metric_function(ERR)
def expected_reciprocal_rank_score(y_true, y_score, *, qid=None, k=None, max_grade=4,
                                   ties=None, empty=None, sample_weight=None,
                                   convention=None) -> float:
    """Expected reciprocal rank (ERR@k) of Chapelle et al. (2009).

    See Also
    --------
    mean_reciprocal_rank_score : ERR with binary stop probabilities.

    Notes
    -----
    A user scans the ranking and stops at rank r with probability
    R_r = (2**l_r - 1) / 2**max_grade:
    ERR@k = sum over r <= k of (1/r) R_r prod_{i<r} (1 - R_i). A query whose
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
