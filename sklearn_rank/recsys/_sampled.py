"""Sampled evaluation: each test positive ranked against N sampled negatives.

Many recommender papers rank each held-out item among N items drawn at random
from those the user has not interacted with (N = 100 in the NCF protocol)
instead of among the whole catalogue. The numbers are cheaper, and
different: Krichene & Rendle (2020) show that sampled metrics are biased,
may order systems differently from the full ranking and, for small N, all
collapse to AUC. This module computes them, labelled as sampled, and the
correction of the paper's rank estimate as an option, labelled as an
estimate.

Users and items are integer codes (``0..n_items - 1`` for the catalogue).
:func:`sample_negatives` draws the negatives, :func:`sampled_evaluate` scores
given positive and negative scores, :func:`evaluate_sampled` does both from a
score matrix or a scoring function.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .._utils.validation import HasMethods, StrOptions, validate_params
from ..metrics import evaluate
from ..metrics._evaluation import Evaluation
from ..metrics._vocab.spec import parse_specs
from ._negatives import COUNT, SEED, excluded_keys, n_candidates_of, pairs, sample_negatives

__all__ = ["CORRECTIONS", "SampledEvaluation", "SampledMetric", "evaluate_sampled",
           "sampled_evaluate"]

#: The corrections of sampled metrics :func:`sampled_evaluate` offers.
CORRECTIONS = ("krichene_rendle",)


# Metrics of one relevant item at (real) rank r <= k, the value 0 beyond k: the
# correction evaluates them at the estimated full rank.
_AT_RANK = {
    "hit_rate": lambda r, k: np.ones_like(r),
    "recall": lambda r, k: np.ones_like(r),
    "p": lambda r, k: np.full_like(r, 1.0 / k),  # (a cut-off is required)
    "ndcg": lambda r, k: 1.0 / np.log2(r + 1.0),
    "dcg": lambda r, k: 1.0 / np.log2(r + 1.0),
    "mrr": lambda r, k: 1.0 / r,
    "map": lambda r, k: 1.0 / r,
}


_CORRECTION = [StrOptions(set(CORRECTIONS)), None]


@dataclass(frozen=True)
class SampledMetric:
    """A registry metric computed on sampled lists: the key of its values.

    ``str()`` is the key in the evaluation: ``"ndcg@10 [sampled 100]"``, or
    ``"ndcg@10 [sampled 100, krichene_rendle estimate]"`` for the corrected
    estimate, so that a sampled number is never read as the full-ranking one
    (``ev.mean["ndcg@10"]`` is a KeyError).
    """

    spec: object  # MetricSpec
    n_negatives: int
    correction: str | None = None
    #: How the per-user values are summarised (their mean), as
    #: :func:`~sklearn_rank.metrics._engine.aggregate.aggregate_of` reads it.
    summary = "mean"

    def __str__(self) -> str:
        tail = "" if self.correction is None else f", {self.correction} estimate"
        return f"{self.spec} [sampled {self.n_negatives}{tail}]"


class SampledEvaluation(Evaluation):
    """An :class:`~sklearn_rank.metrics.Evaluation` of sampled metrics, per user.

    Its keys say that the values are sampled (:class:`SampledMetric`); the
    per-user values are the means over each user's positives, each ranked
    against the user's sampled negatives, so :func:`~sklearn_rank.stats.compare`
    works on them unchanged.

    Attributes
    ----------
    n_negatives : int
        Negatives sampled per user.
    correction : str or None
        The correction whose estimates the evaluation also holds.
    n_positives : ndarray of shape (n_queries,)
        Positives (sampled lists) of each user, aligned with ``qids``.
    """

    def __init__(self, qids, per_query, mean, n_empty, metrics, *, n_negatives,
                 correction, n_positives):
        super().__init__(qids, per_query, mean, n_empty, None, metrics)
        self.n_negatives = n_negatives
        self.correction = correction
        self.n_positives = n_positives

    def __repr__(self) -> str:
        note = f"sampled: {self.n_negatives} negatives per user"
        if self.correction is not None:
            note += f"; '{self.correction}' values are estimates"
        text = super().__repr__().replace("Evaluation(", "SampledEvaluation(", 1)
        return f"{text}\n  ({note})"


def _sampled_specs(metrics, correction):
    """The parsed specs; those a correction cannot take refused by name."""
    specs = parse_specs(metrics)
    for spec in specs:
        if spec.info.aggregate != "mean":
            raise ValueError(f"{spec} is not summarised by a mean over users "
                             f"({spec.info.aggregate}), which sampled evaluation gives; use "
                             "another metric.")
        if correction is None:
            continue
        if spec.name not in _AT_RANK or spec.params or (spec.name == "p" and spec.k is None):
            raise ValueError(
                f"correction={correction!r} estimates metrics of the positive's rank with "
                f"their default options: {', '.join(f'{n}@k' for n in _AT_RANK)} (p needs "
                f"a cut-off); not {str(spec)!r}.")
    return specs


def _at_rank(spec, rank: np.ndarray) -> np.ndarray:
    """``spec``'s value for one relevant item at (real) rank ``rank``."""
    value = _AT_RANK[spec.name](rank, spec.k)
    return value if spec.k is None else np.where(rank <= spec.k, value, 0.0)


def _check_scores(values, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} NaN or infinite score(s); every "
                         "sampled item needs a finite score.")
    return values


@validate_params({
    "pos_scores": ["array-like"],
    "neg_scores": ["array-like"],
    "pos_users": ["array-like", None],
    "users": ["array-like", None],
    "metrics": [str, Iterable],
    "correction": _CORRECTION,
    "n_candidates": [COUNT, "array-like", None],
})
def sampled_evaluate(pos_scores, neg_scores, *, pos_users=None, users=None,
                     metrics=("hit_rate@10", "ndcg@10"), correction=None,
                     n_candidates=None) -> SampledEvaluation:
    """Metrics of each positive ranked against its user's sampled negatives.

    Each positive makes a list of its own: the positive (label 1) and its
    user's ``m`` sampled negatives (label 0), ranked by score (tied scores
    averaged over their orders, as everywhere in the package). The metrics
    are computed on those lists by the registry, a user's value is the mean
    over its positives, and the summary the mean over users.

    Parameters
    ----------
    pos_scores : array-like of shape (n_positives,)
        The score of each positive.
    neg_scores : array-like of shape (n_users, m)
        The scores of each user's m sampled negatives.
    pos_users : array-like of int of shape (n_positives,), default=None
        The row of ``neg_scores`` of each positive's user; None: one positive
        per user, in the rows' order.
    users : array-like of shape (n_users,), default=None
        The ids of the rows of ``neg_scores`` (the evaluation's ``qids``);
        None: ``0..n_users - 1``.
    metrics : str or list of str, default=("hit_rate@10", "ndcg@10")
        Registry metric specs (mean-aggregated: not ``gmap`` or ``gauc``).
    correction : {"krichene_rendle"} or None, default=None
        Also estimate each metric of the full ranking from the sampled rank
        (Krichene & Rendle, 2020; see Notes): keys ``"... [sampled m,
        krichene_rendle estimate]"``.
    n_candidates : int or array-like of shape (n_users,), default=None
        The number of items each user's negatives were drawn from (the
        catalogue less its positives and excluded items); required by
        ``correction``.

    Returns
    -------
    SampledEvaluation
        Per-user values keyed ``"ndcg@10 [sampled 100]"`` (and the
        estimates), for users with at least one positive.

    Notes
    -----
    The sampled rank of a positive is r~ = 1 + (negatives scoring higher)
    + (negatives tied with it) / 2. When m negatives are drawn uniformly
    without replacement from the N candidates, among which r - 1 score
    higher than the positive (r its rank in the full ranking, ties counted
    half), E[r~ - 1] = m (r - 1) / N, so

        r^ = 1 + (r~ - 1) N / m

    is an unbiased estimate of the full rank r. ``correction="krichene_rendle"``
    reports each metric's formula for one relevant item at rank r^ (a real
    number): hit_rate@k and recall@k: [r^ <= k]; p@k: [r^ <= k] / k; ndcg@k
    and dcg@k: [r^ <= k] / log2(r^ + 1); mrr@k and map@k: [r^ <= k] / r^.
    This is the rank-rescaling correction Krichene & Rendle discuss: an
    estimate, not an unbiased estimate of the metric (the metric is not
    linear in the rank); their least-squares corrections (CLS, BV) are not
    implemented. Sampled metrics, corrected or not, can order systems
    differently from the full ranking: evaluate on the full catalogue where
    it is affordable (:func:`sklearn_rank.metrics.evaluate`).

    References
    ----------
    Krichene, W., & Rendle, S. (2020). On sampled metrics for item
    recommendation. KDD 2020, 1748-1757.

    Examples
    --------
    >>> from sklearn_rank.recsys import sampled_evaluate
    >>> ev = sampled_evaluate([0.9, 0.5], [[0.1, 0.2, 0.95], [0.6, 0.7, 0.8]],
    ...                       metrics=["hit_rate@1", "mrr"])
    >>> ev.mean["hit_rate@1 [sampled 3]"], ev.mean["mrr [sampled 3]"]
    (0.0, 0.375)
    """
    specs = _sampled_specs(metrics, correction)
    pos, neg, rows, users = _sampled_inputs(pos_scores, neg_scores, pos_users, users)
    n_users, m = neg.shape
    lists = np.column_stack([pos, neg[rows]])
    labels = np.zeros(lists.shape)
    labels[:, 0] = 1.0
    values = evaluate(labels, lists, metrics=specs).per_query
    counts = np.bincount(rows, minlength=n_users)
    keep = counts > 0

    def per_user(v):
        return (np.bincount(rows, weights=v, minlength=n_users) / np.maximum(counts, 1))[keep]

    entries = [(SampledMetric(spec, m), per_user(values[str(spec)])) for spec in specs]
    if correction is not None:
        estimated = _estimated_ranks(pos, neg, rows, n_candidates, correction)
        entries += [(SampledMetric(spec, m, correction), per_user(_at_rank(spec, estimated)))
                    for spec in specs]
    return SampledEvaluation(
        users[keep], {str(s): v for s, v in entries},
        {str(s): float(v.mean()) if v.size else math.nan for s, v in entries},
        {str(s): 0 for s, _ in entries}, [s for s, _ in entries], n_negatives=m,
        correction=correction, n_positives=counts[keep])


def _sampled_inputs(pos_scores, neg_scores, pos_users, users):
    """The checked ``(pos, neg, rows, users)`` of :func:`sampled_evaluate`."""
    neg = _check_scores(neg_scores, "neg_scores")
    if neg.ndim != 2 or neg.shape[1] < 1:
        raise ValueError(f"neg_scores must be a 2-D array (n_users, m) with m >= 1; got "
                         f"shape {neg.shape}.")
    n_users = neg.shape[0]
    pos = _check_scores(pos_scores, "pos_scores").ravel()
    rows = (np.arange(n_users) if pos_users is None
            else np.asarray(pos_users, dtype=np.int64).ravel())
    if rows.shape != pos.shape or (rows.size and (rows.min() < 0 or rows.max() >= n_users)):
        raise ValueError(
            f"pos_users must give each of the {pos.shape[0]} positives a row of neg_scores "
            f"(0..{n_users - 1}); got {rows.shape[0]} entries"
            + ("" if pos_users is None else f" in {rows.min()}..{rows.max()}") + ".")
    users = np.arange(n_users) if users is None else np.asarray(users)
    if users.shape != (n_users,):
        raise ValueError(f"users must hold one id per row of neg_scores ({n_users}); got "
                         f"shape {users.shape}.")
    return pos, neg, rows, users


def _estimated_ranks(pos, neg, rows, n_candidates, correction) -> np.ndarray:
    """Krichene & Rendle's estimate of each positive's full rank:
    r^ = 1 + (r~ - 1) N / m, r~ = 1 + higher + tied / 2 among the m negatives."""
    n_users, m = neg.shape
    if n_candidates is None:
        raise ValueError(f"correction={correction!r} needs n_candidates, the number of "
                         "items each user's negatives were drawn from.")
    total = np.broadcast_to(np.asarray(n_candidates, dtype=np.float64), (n_users,))
    if (total < m).any():
        raise ValueError(f"n_candidates must be at least m = {m} (the negatives drawn "
                         "from them).")
    higher = (neg[rows] > pos[:, None]).sum(axis=1)
    tied = (neg[rows] == pos[:, None]).sum(axis=1)
    return 1.0 + (higher + 0.5 * tied) * total[rows] / m


def _score(scores, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The scores of (user, item) pairs: from a matrix, a function or an estimator."""
    if hasattr(scores, "predict") and not isinstance(scores, np.ndarray):
        out = scores.predict(np.column_stack([users, items]))
    elif callable(scores):
        out = scores(users, items)
    else:
        matrix = scores
        n_rows = np.shape(matrix)[0]
        if users.size and users.max() >= n_rows:
            raise ValueError(f"User code {int(users.max())} has no row in the score matrix of "
                             f"{n_rows} users.")
        if hasattr(matrix, "tocsr"):  # a SciPy sparse matrix: absent entries score 0
            out = np.asarray(matrix.tocsr()[users, items]).ravel()
        else:
            out = np.asarray(matrix)[users, items]
    out = np.asarray(out, dtype=np.float64).ravel()
    if out.shape != users.shape:
        raise ValueError(f"scores gave {out.shape[0]} values for {users.shape[0]} (user, item) "
                         "pairs; a scoring function must return one score per pair.")
    return out


@validate_params({
    "scores": ["array-like", "sparse matrix", callable, HasMethods(("predict",))],
    "positives": [tuple, list],
    "n_items": [COUNT, None],
    "exclude": [tuple, list, None],
    "n_negatives": [COUNT],
    "seed": SEED,
    "metrics": [str, Iterable],
    "correction": _CORRECTION,
})
def evaluate_sampled(scores, positives, *, n_items=None, exclude=None, n_negatives=100,
                     seed=0, metrics=("hit_rate@10", "ndcg@10"),
                     correction=None) -> SampledEvaluation:
    """Sampled evaluation of a recommender: N sampled negatives per user.

    For each user with test positives, ``n_negatives`` items are drawn
    (:func:`sample_negatives`: uniformly, without replacement, among the
    items that are neither its positives nor in ``exclude``); each positive
    is ranked against them (:func:`sampled_evaluate`).

    Parameters
    ----------
    scores : array-like of shape (n_users, n_items), sparse matrix, callable or estimator
        The model's scores: a dense score matrix (row = user code, column =
        item code), a SciPy sparse matrix (absent entries score 0), a
        function ``scores(user_codes, item_codes) -> array``, or an
        estimator whose ``predict`` takes the pairs as a 2-column array.
    positives : tuple (user_codes, item_codes)
        The test positives.
    n_items : int, default=None
        Size of the catalogue (item codes ``0..n_items - 1``); by default the
        number of columns of a score matrix.
    exclude : tuple (user_codes, item_codes), default=None
        Items never drawn as a user's negatives, typically its training
        items.
    n_negatives : int, default=100
    seed : int or numpy.random.Generator, default=0
    metrics : str or list of str, default=("hit_rate@10", "ndcg@10")
    correction : {"krichene_rendle"} or None, default=None
        See :func:`sampled_evaluate`.

    Returns
    -------
    SampledEvaluation

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.recsys import evaluate_sampled
    >>> scores = np.random.default_rng(0).random((3, 50))
    >>> positives = ([0, 1, 2], [4, 8, 15])
    >>> scores[positives] = 2.0  # every positive first: hits whatever is sampled
    >>> ev = evaluate_sampled(scores, positives, n_negatives=20, metrics=["hit_rate@1"])
    >>> ev.mean["hit_rate@1 [sampled 20]"]
    1.0
    """
    pu, pi = pairs(positives, "positives")
    if n_items is None:
        shape = getattr(scores, "shape", None)
        if shape is None or len(shape) != 2:
            raise ValueError("n_items is needed when scores is a function or an estimator "
                             "(the size of the catalogue the negatives are drawn from).")
        n_items = int(shape[1])
    users = np.unique(pu)
    neg_users, neg_items = sample_negatives(users, (pu, pi), n_items, n_negatives, seed=seed,
                                            exclude=exclude)
    neg = _score(scores, neg_users, neg_items).reshape(users.shape[0], n_negatives)
    pos = _score(scores, pu, pi)
    n_candidates = n_candidates_of(excluded_keys((pu, pi), exclude, n_items), users,
                                 n_items)[2]
    return sampled_evaluate(pos, neg, pos_users=np.searchsorted(users, pu), users=users,
                            metrics=metrics, correction=correction,
                            n_candidates=n_candidates)
