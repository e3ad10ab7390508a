"""Per-query (per-user) ROC AUC: ``auc`` (its mean is uAUC) and ``gauc`` (DIN's GAUC).

Both read the same per-query AUC, computed once per block
(:meth:`~sklearn_rank.metrics._engine.blocks.Ranking.shared`) from the ranks
of the relevant documents (Mann–Whitney): with P relevant and N non-relevant
documents among the n = P + N of a query, ranked by decreasing score,

    AUC = (P (n + 1) - P (P + 1) / 2 - S) / (P N),

S the sum of the relevant documents' ranks, a tie group's members each at
its mean rank (a relevant and a non-relevant document with equal scores count
1/2, as in :func:`sklearn.metrics.roc_auc_score`). Twice every term is an
integer, so the value is computed exactly and rounded once. ``gauc``
averages the same values weighted by each query's number of rows
(``Metric.aggregate = "impressions"``). Each metric is its declaration and
its public function; importing the module registers them.
"""

from __future__ import annotations

import numpy as np

from .._definition import Metric, metric_function
from .._engine.blocks import row_sums
from .._engine.columns import Relevant

__all__ = ["auc_score", "gauc_score"]

_PARAMS = ("threshold", "ties", "empty", "convention")
#: A query with one class only (no relevant or no non-relevant document) has
#: no AUC: left out of the mean unless ``empty`` says otherwise.
_DEFAULTS = {"empty": "skip"}


def _twice_rank_sum(rank, relevant: Relevant) -> np.ndarray:
    """2 S per query: twice the sum of the relevant documents' (1-based,
    decreasing-score) ranks, each tie group's members at its mean rank.

    Exact: every term is an integer below 2**53 for queries of fewer than
    about 6e7 documents. In TREC mode the judged documents the run did not
    retrieve hold the ranks after the retrieved ones, tied with each other.
    """
    n_rows = rank.order.shape[0]
    rows, cols, _, _ = rank.flagged(relevant)
    twice = row_sums(rows, 2.0 * (cols + 1), n_rows)
    if rank.tied:
        # a group at columns c..c+g-1 holding h relevant documents adds h (2c + g + 1)
        width = rank.width
        group_rows, starts, sizes = rank.tie_group_list(width)
        _, _, csum = rank.tie_sums(relevant, width)
        h = csum[group_rows, starts + sizes] - csum[group_rows, starts]
        twice[rank.tie_rows] = row_sums(group_rows, h * (2.0 * starts + sizes + 1),
                                        rank.tie_rows.shape[0])
    retrieved = rank.retrieved
    if retrieved is not None:  # TREC mode: the unretrieved relevant documents, tied last
        unretrieved = rank.count(relevant) - row_sums(rows, np.ones(rows.shape[0]), n_rows)
        twice += unretrieved * (retrieved + 1.0 + rank.lengths)
    return twice


def _auc(rank, p, k):
    """The AUC of each query of the block, and the mask of the queries with
    one class only (no value: the ``empty`` policy applies)."""
    relevant = Relevant(p["threshold"])
    n_pos = rank.count(relevant)
    n = rank.lengths.astype(np.float64)
    n_neg = n - n_pos
    twice = rank.shared(("auc_rank_sum", relevant), lambda: _twice_rank_sum(rank, relevant))
    numerator = 2.0 * n_pos * (n + 1.0) - n_pos * (n_pos + 1.0) - twice
    empty = (n_pos == 0) | (n_neg == 0)
    return np.divide(numerator, 2.0 * n_pos * n_neg, out=np.zeros(n.shape),
                     where=~empty), empty


AUC = Metric(
    "auc", "ROC AUC per query (user) over its rows; its mean over users is uAUC (ties count "
    "1/2)",
    params=_PARAMS, capabilities={"binary", "bounded", "normalised", "pairwise"},
    kernel=_auc, defaults=_DEFAULTS)


@metric_function(AUC)
def auc_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
              sample_weight=None, convention=None) -> float:
    """Per-user ROC AUC averaged over users (uAUC).

    See Also
    --------
    gauc_score : The same per-user AUCs weighted by each user's impressions.
    sklearn.metrics.roc_auc_score : The AUC of one list, which this equals per query.

    Notes
    -----
    For each query (a user, in click or CTR data) the ROC AUC of its rows:
    the probability that a relevant row (label >= ``threshold``: a click)
    scores above a non-relevant one (an impression without a click), a tie
    counting 1/2 — per query, exactly
    ``roc_auc_score(y_true >= threshold, y_score)``. Graded labels are made
    binary by ``threshold``, as for the other binary metrics (ROC AUC is
    defined for two classes). The whole list counts: AUC takes no cut-off
    (``"auc@10"`` is an error).

    A user with one class only (no click, or only clicks) has no AUC: it is
    counted in ``n_empty`` and, by default (``empty='skip'``, this metric's
    own default), left out of the mean, as uAUC is defined;
    ``empty='raise'`` refuses it as :func:`sklearn.metrics.roc_auc_score`
    does (and ``convention='sklearn'`` sets), ``empty='zero'`` or
    ``'one'`` scores it. ``ties='average'`` (the default) counts tied pairs
    1/2; ``'pessimistic'`` / ``'optimistic'`` count them 0 / 1 (bounds);
    ``'stable'`` orders them by input order. Spec: ``"auc"``.

    The value is computed from the ranks of each query's relevant rows in
    O(n log n) (the sort of its scores), exactly: twice the Mann–Whitney sum
    is an integer.

    Examples
    --------
    >>> from sklearn_rank.metrics import auc_score
    >>> # user 1: 3 of its 4 (click, no click) pairs ordered right; user 2: a tie, 1/2
    >>> auc_score([1, 0, 0, 1, 0, 1], [0.9, 0.8, 0.4, 0.5, 0.3, 0.3],
    ...           qid=[1, 1, 1, 1, 2, 2])
    0.625
    >>> auc_score([1, 0, 0, 0], [0.9, 0.8, 0.4, 0.1], qid=[1, 1, 2, 2])  # user 2: no click
    1.0
    """


GAUC = Metric(
    "gauc", "group AUC (DIN): the per-user AUCs averaged with impression weights, the "
    "users' numbers of rows",
    params=_PARAMS, capabilities={"binary", "bounded", "normalised", "pairwise"},
    kernel=_auc, aggregate="impressions", defaults=_DEFAULTS)


@metric_function(GAUC)
def gauc_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
               sample_weight=None, convention=None) -> float:
    """Group AUC (GAUC): per-user ROC AUC averaged with impression weights.

    See Also
    --------
    auc_score : The same per-user AUCs, each user weighing the same (uAUC).

    Notes
    -----
    GAUC = sum over users u of n_u AUC_u / sum over users of n_u, with n_u the
    user's number of rows (impressions), as defined by the Deep Interest
    Network paper (Zhou et al., 2018, eq. 8); AUC_u is :func:`auc_score`'s
    per-user value. Users with one class only have no AUC: counted in
    ``n_empty`` and left out of both sums by default (``empty='skip'``);
    with ``empty='zero'`` or ``'one'`` they count with their impressions.
    With ``sample_weight`` a user's weight is the sum of its rows' weights
    (its weight, the mean of its rows' weights, times n_u): each impression
    weighted. :func:`evaluate` reports the per-user AUCs (the same as
    ``auc``'s); its ``mean`` and :func:`~sklearn_rank.stats.compare` weigh
    them by impressions. Spec: ``"gauc"``.

    References
    ----------
    Zhou, G., et al. (2018). Deep Interest Network for click-through rate
    prediction. KDD 2018, 1059-1068.

    Examples
    --------
    >>> from sklearn_rank.metrics import gauc_score
    >>> # AUCs 3/4 (4 rows) and 1/2 (2 rows): (4 * 3/4 + 2 * 1/2) / 6
    >>> gauc_score([1, 0, 0, 1, 0, 1], [0.9, 0.8, 0.4, 0.5, 0.3, 0.3],
    ...            qid=[1, 1, 1, 1, 2, 2])
    0.6666666666666666
    """
