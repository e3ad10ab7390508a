"""Binary-relevance metrics of the top k: precision, recall, F1, R-precision, RBP.

A document is relevant when its label is >= ``threshold`` (and, in TREC mode,
it is judged). These metrics are linear in the relevance of each rank, so
:meth:`~sklearn_rank.metrics._engine.blocks.Ranking.expected` makes them exact under
``ties="average"``.
Each metric is its kernel, its :class:`~sklearn_rank.metrics._definition.Metric` declaration and
its public function; importing the module registers them.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ..._utils.validation import Interval
from .._definition import Metric, metric_function
from .._engine.blocks import flagged_above, rowdot
from .._engine.columns import Relevant
from .._engine.ranking import in_trec_mode, ranked_relevant
from .._vocab.params import Param, declare

__all__ = ["precision_at_k_score", "recall_at_k_score", "f1_at_k_score", "r_precision_score",
           "rank_biased_precision_score"]


_BINARY = ("threshold", "ties", "empty", "convention")
_CAPPABLE = ("k", "threshold", "capped", "ties", "empty", "convention")


def _hits(rank, p, k) -> np.ndarray:
    """Expected number of relevant documents in the top k (trec_eval's P_k and
    recall_k count by rank; its set measures, without k, judged documents)."""
    relevant = ranked_relevant(p) if k is not None else Relevant(p["threshold"])
    if rank.tied:
        return rank.expected(relevant, rank.cut(k)).sum(axis=1)
    return rank.hits(relevant, rank.cut(k))


def _precision_denominator(rank, p, k) -> np.ndarray:
    """k (missing ranks of short lists count as non-relevant), or min(k, n)
    with ``capped`` (XGBoost); the retrieved list when k is None."""
    n = rank.lengths if rank.retrieved is None else rank.retrieved
    if k is None:
        return n.astype(np.float64)
    if p["capped"]:
        return np.minimum(min(k, rank.width), n).astype(np.float64)
    return np.full(n.shape[0], float(k) if k < 2**1000 else math.inf)  # any int k


def _precision(rank, p, k):
    denominator = _precision_denominator(rank, p, k)
    value = np.divide(_hits(rank, p, k), denominator, out=np.zeros(denominator.shape),
                      where=denominator > 0)
    counted = ranked_relevant(p) if k is not None else Relevant(p["threshold"])
    return value, rank.count(counted) == 0


def _recall(rank, p, k):
    n_rel = rank.count(Relevant(p["threshold"]))
    empty = n_rel == 0
    return np.divide(_hits(rank, p, k), n_rel, out=np.zeros(n_rel.shape), where=~empty), empty


declare(Param("beta", 1.0, (Interval(Real, None, None, closed="neither"),), """\
beta : float, default=1
    F-beta's weight of recall against precision: F = (1 + w) P R / (w P + R)
    with w = beta**2 (van Rijsbergen's F-beta: recall counts beta times as
    much as precision; 1 is F1). Under ``convention='trec_eval'``, w = beta,
    as trec_eval's ``set_F.beta`` (its ``(x + 1) P R / (x P + R)``)."""))


def _f_weight(p) -> float:
    """F's w of (1 + w) P R / (w P + R): beta**2, or beta under trec_eval's convention."""
    beta = p["beta"]
    return beta if p.get("convention") == "trec_eval" or in_trec_mode(p) else beta * beta


def _f1(rank, p, k):
    # F1 = 2 hits / (D + R), linear in the hits, so its expected value over tie
    # orderings is exact; so is F-beta's (1 + w) P R / (w P + R) = (1 + w) hits / (w R + D),
    # written in P and R as trec_eval computes it (its doubles in TREC mode).
    n_rel = rank.count(Relevant(p["threshold"]))
    hits = _hits(rank, p, k)
    w = _f_weight(p)
    some = hits > 0
    if in_trec_mode(p) or w != 1.0:  # trec_eval's set_F: (x + 1) P R / (x P + R)
        precision = np.divide(hits, _precision_denominator(rank, p, k),
                              out=np.zeros(n_rel.shape), where=some)
        recall = np.divide(hits, n_rel, out=np.zeros(n_rel.shape), where=some)
        value = np.divide((w + 1.0) * precision * recall, w * precision + recall,
                          out=np.zeros(n_rel.shape), where=some)
        return value, n_rel == 0
    value = np.divide(2 * hits, _precision_denominator(rank, p, k) + n_rel,
                      out=np.zeros(n_rel.shape), where=some)
    return value, n_rel == 0


def _r_precision(rank, p, k):
    relevant = Relevant(p["threshold"])
    n_rel = rank.count(relevant)
    cut = np.maximum(n_rel, 1).astype(np.intp)  # (R <= the width: R documents are judged)
    at_r = flagged_above(rank.flagged(ranked_relevant(p)), np.arange(cut.shape[0]), cut,
                         rank.width)
    if rank.tied:  # the tie group holding rank R adds its share of its relevant documents
        rows, last = np.arange(rank.tie_rows.shape[0]), cut[rank.tie_rows] - 1
        gstart, gend, csum = rank.tie_sums(relevant, rank.width)
        start, end = gstart[rows, last], gend[rows, last] + 1
        above = csum[rows, start]  # (exact counts)
        at_r = at_r.astype(np.float64)
        at_r[rank.tie_rows] = above + (csum[rows, end] - above) * (last + 1 - start) / (
            end - start)
    empty = n_rel == 0
    return np.divide(at_r, n_rel, out=np.zeros(n_rel.shape), where=~empty), empty


P = Metric(
    "p", "precision: relevant documents in the top k / k (a short list's missing ranks are "
    "non-relevant)",
    params=_CAPPABLE, capabilities={"binary", "cutoff", "bounded"},
    kernel=_precision, aliases=("precision",))


@metric_function(P)
def precision_at_k_score(y_true, y_score, *, qid=None, k=None, threshold=1, capped=None,
                         ties=None, empty=None, sample_weight=None, convention=None) -> float:
    """Precision@k: the fraction of the top ``k`` documents that are relevant.

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


RECALL = Metric(
    "recall", "recall: relevant documents in the top k / relevant documents",
    params=("k", *_BINARY), capabilities={"binary", "cutoff", "bounded", "normalised"},
    kernel=_recall)


@metric_function(RECALL)
def recall_at_k_score(y_true, y_score, *, qid=None, k=None, threshold=1, ties=None,
                      empty=None, sample_weight=None, convention=None) -> float:
    """Recall@k: the fraction of a query's relevant documents in the top ``k``.

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


F1 = Metric(
    "f1", "harmonic mean of precision@k and recall@k (F-beta with beta)",
    params=("k", "beta", "threshold", "capped", "ties", "empty", "convention"),
    capabilities={"binary", "cutoff", "bounded"},
    kernel=_f1)


@metric_function(F1)
def f1_at_k_score(y_true, y_score, *, qid=None, k=None, beta=1.0, threshold=1, capped=None,
                  ties=None, empty=None, sample_weight=None, convention=None) -> float:
    """F1@k: the harmonic mean of precision@k and recall@k (F-beta with ``beta``).

    See Also
    --------
    precision_at_k_score, recall_at_k_score

    Notes
    -----
    F1@k = 2 P R / (P + R) = 2 (number relevant in the top k) / (k + R), with
    P's denominator min(k, n) when ``capped``; 0 when nothing relevant is retrieved.
    With ``beta``, F-beta = (1 + beta**2) P R / (beta**2 P + R) (van Rijsbergen's
    F-beta; under ``convention='trec_eval'`` trec_eval's set_F:
    (1 + beta) P R / (beta P + R), where its beta weighs as beta**2 here).
    Spec: ``"f1@k"``, ``"f1(beta=2)@k"``.

    Examples
    --------
    >>> from sklearn_rank.metrics import f1_at_k_score
    >>> f1_at_k_score([[1, 0, 2, 0]], [[4, 3, 2, 1]], k=2)
    0.5
    >>> f1_at_k_score([[1, 0, 2, 0]], [[4, 3, 2, 1]], k=2, beta=2)  # P = 1/2, R = 1/2
    0.5
    >>> round(f1_at_k_score([[1, 0, 2, 0]], [[4, 3, 2, 1]], k=1, beta=2), 6)  # P 1, R 1/2
    0.555556
    """


R_PRECISION = Metric(
    "r_precision", "precision at R, the number of relevant documents",
    params=_BINARY, capabilities={"binary", "bounded", "normalised"},
    kernel=_r_precision)


@metric_function(R_PRECISION)
def r_precision_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
                      sample_weight=None, convention=None) -> float:
    """R-precision: precision at rank R, the number of relevant documents of the query.

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


# -- rank-biased precision -------------------------------------------------------------

declare(Param("p", 0.8, (Interval(Real, 0, 1, closed="neither"),), """\
p : float, default=0.8
    Persistence of RBP's user, in (0, 1): the probability of going on from
    one rank to the next. The expected number of documents examined is
    1 / (1 - p): 0.5 models a user looking at two documents, 0.95 twenty."""))


def _rbp(rank, options, k):
    """(1 - p) sum over ranks r <= k of rel_r p**(r - 1): linear in the ranks'
    relevance, so its expectation over tie orderings is exact too."""
    relevant = Relevant(options["threshold"])
    cut = rank.cut(k)
    persistence = options["p"]
    weights = (1.0 - persistence) * persistence ** np.arange(cut, dtype=np.float64)
    return rowdot(rank.expected(relevant, cut), weights), rank.count(relevant) == 0


RBP = Metric(
    "rbp", "rank-biased precision (Moffat & Zobel, 2008): (1 - p) sum over relevant "
    "ranks r <= k of p**(r - 1)",
    params=("k", "p", "threshold", "ties", "empty", "convention"),
    capabilities={"binary", "cutoff", "bounded"},
    kernel=_rbp)


@metric_function(RBP)
def rank_biased_precision_score(y_true, y_score, *, qid=None, k=None, p=0.8, threshold=1,
                                ties=None, empty=None, sample_weight=None,
                                convention=None) -> float:
    """Rank-biased precision (RBP) of Moffat & Zobel (2008).

    See Also
    --------
    precision_at_k_score : Every rank of the top k weighs the same.
    expected_reciprocal_rank_score : A user who stops at the first satisfying document.

    Notes
    -----
    A user reads the ranking from the top and goes on from each rank to the
    next with probability ``p`` (the persistence); RBP is the expected rate
    of relevant documents per document read:

    RBP@k = (1 - p) sum over ranks r <= k of rel_r p**(r - 1),

    with rel_r = 1 when the document at rank r is relevant (label >=
    ``threshold``), else 0. A list shorter than k, like a cut-off, leaves
    out the ranks it lacks (the residual of Moffat & Zobel: RBP is a lower
    bound of the value of the whole, unjudged ranking). The value lies in
    [0, 1) and is not normalised: an ideal ranking of R relevant documents
    scores 1 - p**R. A query without relevant documents is empty (see
    ``empty``). Under ``ties="average"`` the value is the exact expectation
    over tie orderings (RBP is linear in the ranks' relevance). Spec:
    ``"rbp(p=0.9)@k"``.

    This is the binary RBP of the paper and of ir_measures' ``RBP(rel=1)``
    (``rel`` is ``threshold``; its ``RBP`` without ``rel`` uses graded
    relevance). trec_eval 10.0's ``rbp`` differs: graded gains scaled to
    [0, 1] and p = 0.9 by default.

    References
    ----------
    Moffat, A., & Zobel, J. (2008). Rank-biased precision for measurement of
    retrieval effectiveness. ACM TOIS 27(1), 2:1-2:27.

    Examples
    --------
    >>> from sklearn_rank.metrics import rank_biased_precision_score
    >>> round(rank_biased_precision_score([[1, 0, 1, 0]], [[4, 3, 2, 1]]), 6)  # 0.2 (1 + 0.8**2)
    0.328
    >>> round(rank_biased_precision_score([[1, 0, 1, 0]], [[4, 3, 2, 1]], p=0.5, k=2), 6)
    0.5
    """
