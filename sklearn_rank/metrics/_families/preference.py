"""Metrics of relevant documents against the judged non-relevant ones above
them: bpref (trec_eval's) and RankEff.

In TREC runs unjudged documents are neither relevant nor judged
non-relevant: these metrics skip them. Under ``ties="average"`` both are
exact expectations over tie orderings, in closed form. Each metric is its
kernel, its :class:`~sklearn_rank.metrics._definition.Metric` declaration and its public
function; importing the module registers them.
"""

from __future__ import annotations

import numpy as np

from .._definition import Metric, metric_function
from .._engine.blocks import flagged_above, row_sums, tie_group_stats
from .._engine.columns import JUDGED, Relevant

__all__ = ["bpref_score", "rank_eff_score"]


_BINARY = ("threshold", "ties", "empty", "convention")


def _non_relevant_above(rank, p):
    """For each relevant retrieved document, in rank order: its row and the
    judged non-relevant documents ranked above it (exact for untied
    rankings); and each query's number of judged non-relevant documents."""
    relevant = Relevant(p["threshold"])
    rows, cols, first, _ = rank.flagged(relevant)
    relevant_above = np.arange(rows.shape[0]) - first[rows]
    if not rank.has_judgments:  # every document is judged
        judged_above, n_judged = cols, rank.lengths
    else:
        judged_above = flagged_above(rank.flagged(JUDGED), rows, cols, rank.width)
        n_judged = rank.count(JUDGED)
    return rows, judged_above - relevant_above, n_judged - rank.count(relevant)


def _judged_in_groups(rank, first, size):
    """For every cell of the tie rows, in a tie group starting at column
    ``first`` of ``size`` documents ((t, w) arrays): the judged documents
    above its group and in it (TREC mode; in arrays every document is judged:
    ``first`` and ``size``). Unjudged documents are neither relevant nor
    judged non-relevant."""
    if not rank.has_judgments:
        return first, size
    _, _, csum = rank.tie_sums(JUDGED, rank.width)
    above = np.take_along_axis(csum, first, axis=1)
    end = first + size.astype(first.dtype)
    return above, np.take_along_axis(csum, end, axis=1) - above


def _rank_eff(rank, p, k):
    relevant = Relevant(p["threshold"])
    rows, above, n_nonrel = _non_relevant_above(rank, p)
    total = row_sums(rows, above, n_nonrel.shape[0])
    if rank.tied:  # a group's h relevant members: its non-relevant ones above them
        # on average half of them each (each pair is in either order), all above the group
        a, g, h, above = tie_group_stats(rank, relevant, rank.width)
        judged_above, judged_in = _judged_in_groups(rank, a, g)
        group = a == np.arange(rank.width)  # (one cell per group: its first)
        total[rank.tie_rows] = np.where(
            group, h * ((judged_above - above) + (judged_in - h) / 2), 0.0).sum(axis=1)
    n_rel = rank.count(relevant)
    empty = n_rel == 0
    # (1/R) sum over relevant retrieved r of (1 - |non-relevant above r| / N):
    # a relevant document the run did not retrieve (TREC runs) earns nothing;
    # with no judged non-relevant document at all (N = 0) each earns 1.
    retrieved_relevant = np.diff(rank.flagged(relevant)[2])
    penalty = np.divide(total, n_nonrel, out=np.zeros(n_rel.shape), where=n_nonrel > 0)
    value = np.divide(retrieved_relevant - penalty, n_rel, out=np.zeros(n_rel.shape),
                      where=~empty)
    return value, empty


def _bpref(rank, p, k):
    """trec_eval's bpref: (1/R) sum over relevant retrieved r of
    (1 - min(|judged non-relevant above r|, R) / min(N, R))."""
    rows, above, n_nonrel = _non_relevant_above(rank, p)
    n_rel = rank.count(Relevant(p["threshold"]))
    denominator = np.minimum(n_nonrel, n_rel)
    penalty = np.divide(np.minimum(above, n_rel[rows]), denominator[rows],
                        out=np.zeros(above.shape), where=denominator[rows] > 0)
    total = row_sums(rows, 1.0 - penalty, n_rel.shape[0])
    if rank.tied:
        total[rank.tie_rows] = _bpref_ties(rank, p, n_rel, denominator)
    empty = n_rel == 0
    return np.divide(total, n_rel, out=np.zeros(n_rel.shape), where=~empty), empty


def _bpref_ties(rank, p, n_rel, denominator) -> np.ndarray:
    """bpref's sum for the tie rows, in closed form per tie group, O(1) each.

    In a group with h relevant and n non-relevant members, below b judged
    non-relevant documents (every document is judged in arrays), the sum over
    its relevant members t of min(b + N_t, R), N_t the non-relevant members
    above t, is sum_{y<R} #{t: b + N_t > y}. A relevant member precedes the
    (z + 1)-th non-relevant one with probability (z + 1) / (n + 1) (its place
    among the n + 1 is uniform), so E #{t: N_t > z} = h (n - z) / (n + 1) for
    0 <= z < n, h for z < 0 and 0 for z >= n; summed over y = b + z:

        h min(b, R) + h (Z n - Z (Z - 1) / 2) / (n + 1),  Z = clip(R - b, 0, n).
    """
    rows, a, size = rank.tie_group_list(rank.width)
    _, _, csum = rank.tie_sums(Relevant(p["threshold"]), rank.width)
    above = csum[rows, a]
    h = csum[rows, a + size] - above
    if rank.has_judgments:  # unjudged members: neither relevant nor judged non-relevant
        _, _, judged = rank.tie_sums(JUDGED, rank.width)
        judged_above = judged[rows, a]
        n = judged[rows, a + size] - judged_above - h
        b = judged_above - above
    else:
        n = size - h
        b = a - above
    cap = n_rel[rank.tie_rows][rows]
    z = np.clip(cap - b, 0, n)
    expected = h * np.minimum(b, cap) + h * (z * n - z * (z - 1) / 2) / (n + 1)
    den = denominator[rank.tie_rows][rows]
    penalty = np.divide(expected, den, out=np.zeros(expected.shape), where=den > 0)
    return np.bincount(rows, weights=h - penalty, minlength=rank.tie_rows.shape[0])


BPREF = Metric(
    "bpref", "binary preference (Buckley & Voorhees, 2004), trec_eval's bpref",
    params=_BINARY, capabilities={"binary", "bounded", "normalised", "judgments"},
    kernel=_bpref)


@metric_function(BPREF)
def bpref_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
                sample_weight=None, convention=None) -> float:
    """Binary preference (bpref, Buckley & Voorhees 2004), trec_eval's definition.

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


RANK_EFF = Metric(
    "rank_eff", "RankEff (Ahlgren & Grönqvist, 2008): relevant documents penalised "
    "by the non-relevant ones above them",
    params=_BINARY, capabilities={"binary", "bounded", "normalised", "judgments"},
    kernel=_rank_eff)


@metric_function(RANK_EFF)
def rank_eff_score(y_true, y_score, *, qid=None, threshold=1, ties=None, empty=None,
                   sample_weight=None, convention=None) -> float:
    """RankEff (Ahlgren & Grönqvist, 2008): relevant documents penalised by the
    non-relevant documents ranked above them.

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
