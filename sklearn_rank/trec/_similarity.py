"""Similarity of two rankings without relevance judgments (Kendall's tau, tau_AP,
overlap@k; RBO is in ``_rbo``), and of two runs, query by query."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .._utils.validation import Interval, StrOptions, validate_params
from ._frames import DataFrame
from ._rbo import as_groups, rbo_parts
from ._tables import Run

__all__ = ["RunSimilarity", "kendall_tau", "overlap_at_k", "run_similarity", "tau_ap"]

_RANKING = ["array-like", list, tuple]
MEASURES = ("rbo", "rbo_min", "rbo_residual", "kendall_tau", "tau_ap", "overlap")


def _common_positions(a_groups, b_groups):
    """The rank (tie group index) in a and in b of each item both hold, in a's order."""
    rank_b = {item: r for r, group in enumerate(b_groups) for item in group}
    ra, rb = [], []
    for r, group in enumerate(a_groups):
        for item in group:
            if item in rank_b:
                ra.append(r)
                rb.append(rank_b[item])
    return np.asarray(ra, dtype=np.float64), np.asarray(rb, dtype=np.float64)


def _too_few(n: int, what: str) -> ValueError:
    return ValueError(f"{what} needs at least 2 items that both rankings hold; they share "
                      f"{n}. (run_similarity reports NaN for such a query.)")


def _kendall(a_groups, b_groups) -> float:
    from scipy import stats

    ra, rb = _common_positions(a_groups, b_groups)
    if ra.shape[0] < 2:
        raise _too_few(ra.shape[0], "Kendall's tau")
    if np.all(ra == ra[0]) or np.all(rb == rb[0]):
        raise ValueError("Kendall's tau is undefined when every shared item is tied in one "
                         "ranking.")
    return float(stats.kendalltau(ra, rb).statistic)


def _tau_ap(a_groups, b_groups) -> float:
    if any(len(g) > 1 for g in a_groups) or any(len(g) > 1 for g in b_groups):
        raise ValueError("tau_AP is defined for rankings without ties; break the ties "
                         "first (run_similarity: ties='docno').")
    ra, rb = _common_positions(a_groups, b_groups)
    n = rb.shape[0]
    if n < 2:
        raise _too_few(n, "tau_AP")
    # C(i): items above position i in a that b also ranks above a's i-th item
    correct = _smaller_before(rb)[1:]
    return float(2.0 / (n - 1) * np.sum(correct / np.arange(1, n)) - 1.0)


#: Up to this many shared items, tau_AP's counts come from an n x n comparison
#: (4 MiB of booleans); beyond, from a Fenwick tree in O(n log n).
_DENSE_TAU_AP = 2048


def _smaller_before(values: np.ndarray) -> np.ndarray:
    """For each position i, how many earlier values are smaller than values[i]
    (the values are distinct)."""
    n = values.shape[0]
    if n <= _DENSE_TAU_AP:
        return np.tril(values[None, :] < values[:, None], -1).sum(axis=1)
    ranks = np.argsort(np.argsort(values, kind="stable"), kind="stable") + 1
    tree = [0] * (n + 1)
    out = np.empty(n, dtype=np.int64)
    for i, r in enumerate(ranks.tolist()):
        count, k = 0, r - 1
        while k > 0:
            count += tree[k]
            k -= k & -k
        out[i] = count
        k = r
        while k <= n:
            tree[k] += 1
            k += k & -k
    return out


def _prefix(groups, k: int) -> set:
    """The items of the tie groups that start within the top k."""
    items, start = set(), 0
    for group in groups:
        if start >= k:
            break
        items.update(group)
        start += len(group)
    return items


def _overlap(a_groups, b_groups, k: int) -> float:
    top_a, top_b = _prefix(a_groups, k), _prefix(b_groups, k)
    union = top_a | top_b
    return 1.0 if not union else len(top_a & top_b) / len(union)


@validate_params({"a": _RANKING, "b": _RANKING})
def kendall_tau(a, b) -> float:
    """Kendall's tau between two rankings, on the items both hold.

    Parameters
    ----------
    a, b : sequence
        The rankings, best first: items, each once; an entry that is a list,
        tuple or set holds items tied at one rank.

    Returns
    -------
    tau : float
        In [-1, 1]: tau-b (:func:`scipy.stats.kendalltau`), which is tau-a
        when neither ranking has ties among the shared items.

    Raises
    ------
    ValueError
        If the rankings share fewer than 2 items, or every shared item is
        tied in one of them (tau is undefined).

    Notes
    -----
    Items that only one ranking holds are left out: tau compares orders of
    the same items. For rankings that hold different items, rank-biased
    overlap (:func:`rank_biased_overlap`) measures both membership and order.

    Examples
    --------
    >>> from sklearn_rank.trec import kendall_tau
    >>> round(kendall_tau(["a", "b", "c"], ["b", "a", "c"]), 6)
    0.333333
    """
    return _kendall(as_groups(a, "a"), as_groups(b, "b"))


@validate_params({"a": _RANKING, "b": _RANKING})
def tau_ap(a, b) -> float:
    """AP correlation tau_AP of ranking ``a`` against the reference ranking ``b``
    (Yilmaz, Aslam and Robertson, 2008), on the items both hold.

    Parameters
    ----------
    a : sequence
        The ranking evaluated, best first: items, each once, without ties.
    b : sequence
        The reference ranking, best first.

    Returns
    -------
    tau_ap : float
        In [-1, 1]: 1 for the same order, -1 for the reversed one.

    Raises
    ------
    ValueError
        If the rankings share fewer than 2 items, or either has ties.

    Notes
    -----
    ``tau_AP = 2 / (n - 1) * sum_{i=2}^{n} C(i) / (i - 1) - 1``, where ``C(i)``
    counts the items above position ``i`` of ``a`` that ``b`` also ranks above
    ``a``'s ``i``-th item. A swap near the top costs more than one near the
    bottom, unlike Kendall's tau. It is not symmetric: ``(tau_ap(a, b) +
    tau_ap(b, a)) / 2`` is the symmetrised form.

    References
    ----------
    .. [1] E. Yilmaz, J. A. Aslam and S. Robertson, "A new rank correlation
       coefficient for information retrieval", SIGIR 2008.

    Examples
    --------
    >>> from sklearn_rank.trec import tau_ap
    >>> tau_ap([1, 2, 3], [2, 1, 3]), tau_ap([1, 2, 3], [1, 3, 2])
    (0.0, 0.5)
    """
    return _tau_ap(as_groups(a, "a"), as_groups(b, "b"))


@validate_params({"a": _RANKING, "b": _RANKING,
                  "k": [Interval(Integral, 1, None, closed="left")]})
def overlap_at_k(a, b, *, k) -> float:
    """Overlap of the top ``k`` items of two rankings: the Jaccard index of the
    two sets.

    Parameters
    ----------
    a, b : sequence
        The rankings, best first; an entry that is a list, tuple or set holds
        items tied at one rank.
    k : int
        The depth. A tie group that starts within the top ``k`` is wholly in
        the top ``k`` (as rank-biased overlap's prefixes); a ranking shorter
        than ``k`` contributes all its items.

    Returns
    -------
    overlap : float
        ``|A & B| / |A | B|`` in [0, 1]; 1 when both tops are empty.

    Examples
    --------
    >>> from sklearn_rank.trec import overlap_at_k
    >>> overlap_at_k(["a", "b", "c"], ["b", "d", "a"], k=2)
    0.3333333333333333
    """
    return _overlap(as_groups(a, "a"), as_groups(b, "b"), k)


# ---------------------------------------------------------------- runs


@dataclass(frozen=True, eq=False)
class RunSimilarity:
    """Similarity of two runs, per query and averaged.

    Attributes
    ----------
    qids : ndarray of str
        The queries both runs retrieve for, sorted.
    per_query : dict of str -> ndarray of shape (n_queries,)
        Each measure's value per query; NaN where it is undefined on that
        query (Kendall's tau or tau_AP with fewer than 2 shared documents).
    mean : dict of str -> float
        Each measure's mean over the queries where it is defined.
    n_defined : dict of str -> int
        How many queries each mean is over.
    only_a, only_b : ndarray of str
        Queries only one run retrieves for (left out).
    p : float
        RBO's persistence.
    k : int
        The depth of ``overlap``.
    """

    qids: np.ndarray
    per_query: dict
    mean: dict
    n_defined: dict
    only_a: np.ndarray
    only_b: np.ndarray
    p: float
    k: int

    def __repr__(self) -> str:
        means = ", ".join(f"{name}={value:.4f}" for name, value in self.mean.items())
        return f"RunSimilarity({self.qids.shape[0]} queries: {means})"

    def to_frame(self):
        """The per-query values as a pandas DataFrame indexed by ``qid``."""
        import pandas as pd

        return pd.DataFrame(dict(self.per_query), index=pd.Index(self.qids, name="qid"))


def _as_run(run, name: str) -> Run:
    if isinstance(run, Run):
        return run
    if isinstance(run, dict):
        return Run.from_dict(run)
    if isinstance(run, DataFrame):
        return Run.from_frame(run)
    raise TypeError(f"{name} must be a Run, a {{qid: {{docno: score}}}} dict or a pandas or "
                    f"polars DataFrame (qid, docno, score), got {type(run).__name__}.")


def _rankings(run: Run, ties: str, depth: int | None) -> dict:
    """Each query's ranking as tie groups: decreasing score, equal scores by
    decreasing document id (trec_eval's order), or tied (``ties='keep'``)."""
    qid, docno, score = run.qid, run.docno, np.asarray(run.score, dtype=np.float64)
    order = np.lexsort((docno, score, qid))[::-1]  # qid, score, docno all decreasing
    rankings = {}
    q_sorted = qid[order]
    starts = np.flatnonzero(np.r_[True, q_sorted[1:] != q_sorted[:-1]])
    for start, end in zip(starts, np.r_[starts[1:], order.shape[0]], strict=True):
        rows = order[start:end][:depth]
        docs = docno[rows].tolist()
        if ties == "keep":
            cut = np.flatnonzero(np.diff(score[rows]) != 0) + 1
            groups = [docs[i:j] for i, j in zip(np.r_[0, cut], np.r_[cut, len(docs)],
                                                 strict=True)]
        else:
            groups = [[d] for d in docs]
        rankings[q_sorted[start]] = groups
    return rankings


def _measure(name: str, a, b, p: float, k: int) -> float:
    if name.startswith("rbo"):
        rbo_min, residual, ext = rbo_parts(a, b, p)
        return {"rbo": ext, "rbo_min": rbo_min, "rbo_residual": residual}[name]
    if name == "overlap":
        return _overlap(a, b, k)
    try:
        return _kendall(a, b) if name == "kendall_tau" else _tau_ap(a, b)
    except ValueError as error:
        if "ties" in str(error):
            raise
        return float("nan")  # fewer than 2 shared documents: undefined


@validate_params({
    "run_a": [Run, dict, DataFrame], "run_b": [Run, dict, DataFrame],
    "measures": [list, tuple],
    "p": [Interval(Real, 0, 1, closed="neither")],
    "k": [Interval(Integral, 1, None, closed="left")],
    "depth": [Interval(Integral, 1, None, closed="left"), None],
    "ties": [StrOptions({"docno", "keep"})],
})
def run_similarity(run_a, run_b, *, measures=("rbo", "kendall_tau", "overlap"), p=0.9, k=10,
                   depth=None, ties="docno") -> RunSimilarity:
    """How similar two runs' rankings are, query by query, without judgments.

    Parameters
    ----------
    run_a, run_b : Run, dict or DataFrame
        The runs: :class:`Run` tables, ``{qid: {docno: score}}`` dicts, or
        pandas / polars frames with the columns ``qid, docno, score``.
    measures : sequence of str, default=('rbo', 'kendall_tau', 'overlap')
        Any of ``'rbo'`` (extrapolated), ``'rbo_min'``, ``'rbo_residual'``
        (:func:`rank_biased_overlap`), ``'kendall_tau'`` (:func:`kendall_tau`),
        ``'tau_ap'`` (:func:`tau_ap`, ``run_a`` against ``run_b``) and
        ``'overlap'`` (:func:`overlap_at_k`).
    p : float, default=0.9
        RBO's persistence.
    k : int, default=10
        The depth of ``'overlap'``.
    depth : int, default=None
        Compare only each query's top ``depth`` documents (all by default).
    ties : {'docno', 'keep'}, default='docno'
        Equal scores: ranked by decreasing document id, as trec_eval ranks
        them, or kept as ties (Webber's ties for RBO, tau-b for Kendall's tau;
        ``'tau_ap'`` refuses a tie).

    Returns
    -------
    similarity : RunSimilarity
        ``per_query``, ``mean`` and ``n_defined`` by measure, over the queries
        both runs retrieve for.

    Raises
    ------
    ValueError
        If a measure is unknown, or the runs share no query.

    Examples
    --------
    >>> from sklearn_rank.trec import run_similarity
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d1": 1.0, "d2": 2.0}}
    >>> b = {"q1": {"d1": 3.0, "d3": 2.0, "d2": 1.0}, "q2": {"d2": 1.0, "d4": 0.5}}
    >>> sim = run_similarity(a, b, measures=["rbo", "overlap"], k=2)
    >>> sim.per_query["overlap"].tolist()
    [0.3333333333333333, 0.3333333333333333]
    """
    names = list(measures)
    unknown = [m for m in names if m not in MEASURES]
    if unknown or not names:
        raise ValueError(f"Unknown measures {unknown}: choose from {', '.join(MEASURES)}.")
    ra = _rankings(_as_run(run_a, "run_a"), ties, depth)
    rb = _rankings(_as_run(run_b, "run_b"), ties, depth)
    shared = sorted(set(ra) & set(rb))
    if not shared:
        raise ValueError(f"The runs share no query ({len(ra)} in run_a, {len(rb)} in "
                         "run_b): check that their query ids are spelled alike.")
    per_query = {m: np.array([_measure(m, ra[q], rb[q], p, k) for q in shared])
                 for m in names}
    defined = {m: int(np.count_nonzero(~np.isnan(v))) for m, v in per_query.items()}
    mean = {m: float(np.nanmean(v)) if defined[m] else float("nan")
            for m, v in per_query.items()}
    return RunSimilarity(np.asarray(shared), per_query, mean, defined,
                         np.asarray(sorted(set(ra) - set(rb))),
                         np.asarray(sorted(set(rb) - set(ra))), float(p), int(k))
