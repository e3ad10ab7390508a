"""Beyond-accuracy metrics of top-k recommendation lists, as array functions.

Items are integer codes ``0..n_items-1``; the catalog is the codes
``0..n_catalog-1`` (larger codes are items recommended but outside it). The
top lists are one 2-D int64 array ``top`` of shape ``(n_users, k)``: row ``u``
holds user ``u``'s recommended item codes in rank order, padded with ``-1``
where the user has fewer than ``k``. System-level metrics return one float;
per-user metrics return a float64 array of length ``n_users``, NaN where the
metric has no value for that user (an empty list, a single item for ILD, no
training history for the history-based serendipity).

Each metric follows the issue's definition unless ``convention=`` names the
library (or paper) whose definition to follow instead; the differences are in
each function's Notes and in ``docs/user_guide/_recsys_definitions.rst``. The
arithmetic is vectorised NumPy over users, in chunks of users where a
temporary would otherwise grow with ``n_users * k * d``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .._utils.validation import Interval, StrOptions, validate_params

__all__ = ["BEYOND", "Popularity", "arp", "catalog_coverage", "cooccurrence_features", "entropy",
           "gini", "ild", "novelty", "serendipity", "short_head", "tail_share"]

#: Work (array elements) per chunk of users: bounds the temporaries.
_CHUNK = 1 << 22
_COUNT = Interval(Integral, 1, None, closed="left")
#: The most products a sparse Gram matrix of item rows may cost to be kept.
_GRAM = 1 << 27


@dataclass(frozen=True)
class Popularity:
    """Item popularity in the training interactions.

    Parameters
    ----------
    interactions : ndarray of shape (n_items,)
        Training interactions (rows of ``train``) per item code; 0 for an item
        never seen in training.
    users : ndarray of shape (n_items,)
        Distinct training users per item code.
    n_users : int
        Distinct users in the training interactions.
    """

    interactions: np.ndarray
    users: np.ndarray
    n_users: int

    @classmethod
    def from_codes(cls, user_codes, item_codes, n_items: int) -> Popularity:
        """Count the training interactions ``(user_codes[j], item_codes[j])``.

        Parameters
        ----------
        user_codes, item_codes : array-like of int, shape (n_interactions,)
            One training interaction per position (duplicates count as
            interactions, once as users).
        n_items : int
            Number of item codes; ``item_codes`` must be in ``0..n_items-1``.

        Returns
        -------
        Popularity

        Examples
        --------
        >>> pop = Popularity.from_codes([0, 0, 1, 1], [2, 2, 2, 0], n_items=3)
        >>> pop.interactions, pop.users, pop.n_users
        (array([1., 0., 3.]), array([1., 0., 2.]), 2)
        """
        user_codes = np.asarray(user_codes, dtype=np.int64).ravel()
        item_codes = np.asarray(item_codes, dtype=np.int64).ravel()
        if user_codes.shape != item_codes.shape:
            raise ValueError(f"user_codes and item_codes have different lengths "
                             f"({user_codes.size} and {item_codes.size}).")
        if item_codes.size and (item_codes.min() < 0 or item_codes.max() >= n_items):
            raise ValueError(f"item_codes must be in 0..{n_items - 1} (n_items={n_items}).")
        if user_codes.size and user_codes.min() < 0:
            raise ValueError("user_codes must be >= 0.")
        users, items = _distinct_pairs(user_codes, item_codes, n_items)
        return cls(interactions=np.bincount(item_codes, minlength=n_items).astype(np.float64),
                   users=np.bincount(items, minlength=n_items).astype(np.float64),
                   n_users=int(np.count_nonzero(np.bincount(user_codes))))


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` by a sort and a comparison of neighbours (several times
    faster than NumPy 2's ``np.unique`` on tens of millions of int64)."""
    values = np.sort(values)
    keep = np.empty(values.size, dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _distinct_pairs(user_codes: np.ndarray, item_codes: np.ndarray, n_items: int):
    """The distinct ``(user, item)`` pairs, sorted by user then item."""
    key = _sorted_unique(user_codes * np.int64(max(n_items, 1)) + item_codes)
    return key // max(n_items, 1), key % max(n_items, 1)


# -- inputs ---------------------------------------------------------------------------------

def _top(top) -> np.ndarray:
    """``top`` as a 2-D int64 array; a clear error for anything else."""
    array = np.asarray(top)
    if array.ndim != 2:
        raise ValueError(f"top must be a 2-D array of item codes (n_users, k), "
                         f"got an array of shape {array.shape}.")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"top must hold integer item codes padded with -1, got dtype "
                         f"{array.dtype}.")
    array = array.astype(np.int64, copy=False)
    if array.size and array.min() < -1:
        raise ValueError("top holds negative item codes other than the padding -1.")
    return array


def _check_codes(top: np.ndarray, n_items: int, name: str) -> None:
    if top.size and top.max() >= n_items:
        raise ValueError(f"top holds item code {int(top.max())} but {name} covers only "
                         f"{n_items} items (codes 0..{n_items - 1}).")


def _user_mean(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row, the mean of ``values`` over the ``valid`` entries; NaN for none."""
    n = valid.sum(axis=1)
    total = np.where(valid, values, 0.0).sum(axis=1)
    return np.divide(total, n, out=np.full(n.shape, np.nan), where=n > 0)


def _chunks(n_rows: int, per_row: int):
    """Slices of rows so that a chunk holds about ``_CHUNK`` elements."""
    step = max(1, _CHUNK // max(per_row, 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def _chunks_by_work(work: np.ndarray):
    """Slices of rows whose summed ``work`` stays about ``_CHUNK`` (one row at least)."""
    ends = np.cumsum(work, dtype=np.float64)
    start = 0
    while start < work.size:
        done = ends[start - 1] if start else 0.0
        stop = int(np.searchsorted(ends, done + _CHUNK, side="right"))
        stop = min(max(stop, start + 1), work.size)
        yield slice(start, stop)
        start = stop


# -- system level ---------------------------------------------------------------------------

@validate_params({"top": ["array-like"], "n_catalog": [_COUNT],
                  "convention": [StrOptions({"recommenders", "recbole", "rectools"}), None]})
def catalog_coverage(top, n_catalog: int, *, convention: str | None = None) -> float:
    r"""Share of the catalog recommended to at least one user.

    .. math:: \mathrm{coverage@k} = \frac{|\bigcup_u \mathrm{top}_k(u) \cap C|}{|C|}

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    n_catalog : int
        Size of the catalog ``C``: item codes ``0..n_catalog-1``.
    convention : {'recommenders', 'recbole', 'rectools'}, default=None
        None counts only catalog items. The libraries count every distinct
        recommended item, in or out of the catalog (so their value can exceed
        1): Microsoft Recommenders' ``catalog_coverage`` (catalog = items of
        ``train``), RecBole's ``ItemCoverage``, rectools'
        ``CatalogCoverage(normalize=True)``.

    Returns
    -------
    float

    Examples
    --------
    >>> catalog_coverage([[0, 1], [1, -1], [7, 2]], n_catalog=4)
    0.75
    >>> catalog_coverage([[0, 1], [1, -1], [7, 2]], n_catalog=4, convention="recommenders")
    1.0
    """
    counts = np.bincount(_top(top).ravel() + 1)[1:]  # (+1: the padding -1 lands at 0)
    return float(np.count_nonzero(counts[:n_catalog] if convention is None else counts)
                 / n_catalog)


def _catalog_counts(top: np.ndarray, n_catalog: int) -> np.ndarray:
    items = top[(top >= 0) & (top < n_catalog)]
    return np.bincount(items, minlength=n_catalog).astype(np.float64)


@validate_params({"top": ["array-like"], "n_catalog": [_COUNT]})
def gini(top, n_catalog: int) -> float:
    r"""Gini index of the recommendation counts over the catalog.

    With the counts of every catalog item (0 for items never recommended)
    sorted ascending, :math:`c_1 \le \dots \le c_n`,

    .. math:: G = \frac{\sum_{i=1}^{n} (2i - n - 1)\, c_i}{n \sum_{i=1}^{n} c_i}

    0 when every item is recommended equally often, :math:`1 - 1/n` when one
    item takes every slot. Recommendations of items outside the catalog are
    not counted; NaN when no catalog item is recommended.

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    n_catalog : int
        Number of catalog items ``n`` (codes ``0..n_catalog-1``).

    Returns
    -------
    float

    Notes
    -----
    RecBole's ``GiniIndex`` computes the same formula with ``n`` its number of
    items and the counts of its full (unpadded) top-k matrix.

    Examples
    --------
    >>> gini([[0, 1], [0, 2]], n_catalog=4)
    0.375
    """
    counts = np.sort(_catalog_counts(_top(top), n_catalog))
    total = counts.sum()
    if total == 0:
        return math.nan
    n = counts.size
    weights = 2.0 * np.arange(1, n + 1) - n - 1
    return float(weights @ counts / (n * total))


@validate_params({"top": ["array-like"], "convention": [StrOptions({"recommenders", "recbole"}),
                                                        None]})
def entropy(top, *, convention: str | None = None) -> float:
    r"""Shannon entropy of the recommendation counts (distributional coverage).

    With :math:`p(i)` the share of all recommendation slots that item ``i``
    fills (padding excluded, items outside the catalog included),

    .. math:: H = -\sum_i p(i) \log_2 p(i)

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    convention : {'recommenders', 'recbole'}, default=None
        None and 'recommenders' (Microsoft Recommenders'
        ``distributional_coverage``) are the formula above. 'recbole' is
        RecBole's ``ShannonEntropy``: natural logarithm, divided by the number
        of distinct recommended items.

    Returns
    -------
    float
        NaN when nothing is recommended.

    Examples
    --------
    >>> entropy([[0, 1], [0, 2]])
    1.5
    """
    top = _top(top)
    counts = np.bincount(top[top >= 0])
    counts = counts[counts > 0].astype(np.float64)
    if counts.size == 0:
        return math.nan
    p = counts / counts.sum()
    if convention == "recbole":
        return float(-(p * np.log(p)).sum() / counts.size)
    return float(-(p * np.log2(p)).sum())


# -- popularity -----------------------------------------------------------------------------

def _popularity(popularity) -> Popularity:
    if not isinstance(popularity, Popularity):
        raise TypeError(f"popularity must be a Popularity (Popularity.from_codes(user_codes, "
                        f"item_codes, n_items)), got {type(popularity).__name__}.")
    return popularity


_UNSEEN = {None: "max", "rectools": "max", "recommenders": "zero"}


@validate_params({"top": ["array-like"], "popularity": [Popularity],
                  "unseen": [StrOptions({"max", "zero", "skip"}), None],
                  "convention": [StrOptions({"recommenders", "rectools"}), None]})
def novelty(top, popularity: Popularity, *, unseen: str | None = None,
            convention: str | None = None) -> np.ndarray:
    r"""Per user, the mean self-information of the recommended items.

    .. math:: \mathrm{novelty@k}(u) = \frac{1}{|L_u|}\sum_{i \in L_u} -\log_2 p(i),
              \qquad p(i) = \frac{|\{v : v \text{ saw } i \text{ in training}\}|}{|U_{train}|}

    with :math:`L_u` the user's list (at most k items; padding excluded).

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    popularity : Popularity
        Training popularity of every item code.
    unseen : {'max', 'zero', 'skip'}, default=None
        The rule for items no training user saw (:math:`p(i) = 0`): 'max'
        counts them as seen by one user, :math:`\log_2 |U_{train}|`, the
        largest finite novelty (rectools' rule for cold items); 'zero' gives
        them novelty 0; 'skip' leaves them out of the user's mean. None takes
        the convention's rule ('max', or 'zero' for 'recommenders').
    convention : {'recommenders', 'rectools'}, default=None
        None and 'rectools' (``MeanInvUserFreq``) are the formula above.
        'recommenders' is Microsoft Recommenders' ``novelty``:
        :math:`p(i)` the item's share of all training interactions (rows),
        unseen items 0.

    Returns
    -------
    ndarray of shape (n_users,)
        NaN for users with an empty list (or only skipped items).

    Notes
    -----
    Recommenders returns one number, the mean over all recommendation rows;
    it equals the mean of these per-user values when every list has the same
    length. Its unseen items count 0 but stay in the denominator, as 'zero'.

    References
    ----------
    P. Castells, S. Vargas and J. Wang, "Novelty and diversity metrics for
    recommender systems: choice, discovery and relevance", ECIR 2011.

    Examples
    --------
    >>> pop = Popularity.from_codes([0, 0, 1, 2, 3], [0, 1, 0, 0, 0], n_items=3)
    >>> novelty([[0, 1], [2, -1], [-1, -1]], pop)
    array([ 1.,  2., nan])
    """
    top = _top(top)
    pop = _popularity(popularity)
    _check_codes(top, pop.users.size, "popularity")
    if pop.n_users == 0:
        raise ValueError("novelty needs training interactions: popularity has no users.")
    unseen = _UNSEEN[convention] if unseen is None else unseen
    if convention == "recommenders":
        seen, total = pop.interactions, pop.interactions.sum()
    else:
        seen, total = pop.users, float(pop.n_users)
    with np.errstate(divide="ignore"):
        info = -np.log2(seen / total)
    cold = seen == 0
    info[cold] = {"max": math.log2(total), "zero": 0.0, "skip": math.nan}[unseen]
    valid = top >= 0
    values = info[np.where(valid, top, 0)]
    return _user_mean(values, valid & ~np.isnan(values))


@validate_params({"top": ["array-like"], "popularity": [Popularity]})
def arp(top, popularity: Popularity) -> np.ndarray:
    r"""Per user, the average recommendation popularity (ARP).

    .. math:: \mathrm{ARP@k}(u) = \frac{1}{|L_u|}\sum_{i \in L_u} \phi(i)

    with :math:`\phi(i)` the item's number of training interactions (0 for
    items never seen in training) and :math:`L_u` the user's list.

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    popularity : Popularity
        Training popularity of every item code.

    Returns
    -------
    ndarray of shape (n_users,)
        NaN for users with an empty list.

    Notes
    -----
    RecBole's ``AveragePopularity`` is the same (its lists are never short).

    References
    ----------
    H. Abdollahpouri, R. Burke and B. Mobasher, "Managing popularity bias in
    recommender systems with personalized re-ranking", FLAIRS 2019.

    Examples
    --------
    >>> pop = Popularity.from_codes([0, 0, 1, 2, 3], [0, 1, 0, 0, 0], n_items=3)
    >>> arp([[0, 1], [2, -1], [-1, -1]], pop)
    array([2.5, 0. , nan])
    """
    top = _top(top)
    pop = _popularity(popularity)
    _check_codes(top, pop.interactions.size, "popularity")
    valid = top >= 0
    return _user_mean(pop.interactions[np.where(valid, top, 0)], valid)


def short_head(interactions: np.ndarray, head: float) -> np.ndarray:
    """Boolean mask of the short-head items: the most popular items that
    together hold at least ``head`` of the training interactions, with every
    item tied with the last one included (so the head does not depend on the
    order of ties); items without interactions are never in it."""
    total = interactions.sum()
    order = np.sort(interactions)[::-1]
    reached = np.flatnonzero(np.cumsum(order) >= head * total)
    threshold = order[reached[0]] if reached.size else order[-1]
    return (interactions >= threshold) & (interactions > 0)


def _recbole_tail(interactions: np.ndarray, tail: float) -> np.ndarray:
    """RecBole's ``TailPercentage`` long tail: items with at most ``tail``
    training interactions when ``tail > 1``, else the ``max(int(m * tail), 1)``
    least popular of the ``m`` items seen in training (ties by item code)."""
    seen = np.flatnonzero(interactions > 0)
    if tail > 1:
        return np.isin(np.arange(interactions.size), seen[interactions[seen] <= tail])
    order = seen[np.lexsort((seen, interactions[seen]))]
    mask = np.zeros(interactions.size, dtype=bool)
    mask[order[:max(int(seen.size * tail), 1)]] = True
    return mask


@validate_params({"top": ["array-like"], "popularity": [Popularity],
                  "head": [Interval(Real, 0, 1, closed="right")],
                  "convention": [StrOptions({"recbole"}), None],
                  "tail": [Interval(Real, 0, None, closed="neither"), None]})
def tail_share(top, popularity: Popularity, *, head: float = 0.8, convention: str | None = None,
               tail: float | None = None) -> np.ndarray:
    r"""Per user, the share of the list outside the short head (long-tail share).

    The short head is the set of most popular items that together hold at
    least ``head`` (80%) of the training interactions; items tied in
    popularity with the last head item are in the head too, and items with no
    training interaction are in the tail.

    .. math:: \mathrm{tail@k}(u) = \frac{|L_u \setminus \mathrm{Head}|}{|L_u|}

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    popularity : Popularity
        Training popularity of every item code.
    head : float in (0, 1], default=0.8
        Share of the training interactions the short head holds.
    convention : {'recbole'}, default=None
        'recbole' is RecBole's ``TailPercentage``: the tail is the ``tail``
        share (default 0.1) of least popular items seen in training (ties by
        item code), or the items with at most ``tail`` interactions when
        ``tail > 1``; items never seen in training are *not* in its tail.
    tail : float, default=None
        RecBole's ``tail_ratio`` (only with ``convention='recbole'``).

    Returns
    -------
    ndarray of shape (n_users,)
        NaN for users with an empty list.

    References
    ----------
    H. Abdollahpouri, R. Burke and B. Mobasher, "Controlling popularity bias
    in learning-to-rank recommendation", RecSys 2017.

    Examples
    --------
    >>> pop = Popularity.from_codes([0, 1, 2, 3, 0], [0, 0, 0, 0, 1], n_items=3)
    >>> tail_share([[0, 1], [2, -1]], pop)
    array([0.5, 1. ])
    """
    top = _top(top)
    pop = _popularity(popularity)
    _check_codes(top, pop.interactions.size, "popularity")
    if convention == "recbole":
        in_tail = _recbole_tail(pop.interactions, 0.1 if tail is None else tail)
    else:
        if tail is not None:
            raise ValueError("tail= is RecBole's tail_ratio: pass it with convention='recbole' "
                             "(the default convention's option is head=).")
        if pop.interactions.sum() == 0:
            raise ValueError("tail_share needs training interactions: popularity is empty.")
        in_tail = ~short_head(pop.interactions, head)
    valid = top >= 0
    return _user_mean(in_tail[np.where(valid, top, 0)].astype(np.float64), valid)


# -- similarity of items --------------------------------------------------------------------

class _Features:
    """Item features prepared for one similarity: ``similarity(a, b)`` and
    ``distance(a, b)`` of item codes pairwise (rows of equal length)."""

    def __init__(self, item_features, similarity: str):
        import scipy.sparse as sp

        if sp.issparse(item_features):
            matrix = sp.csr_array(item_features, dtype=np.float64)
        else:
            matrix = np.asarray(item_features, dtype=np.float64)
            if matrix.ndim != 2:
                raise ValueError(f"item_features must be a 2-D array (n_items, n_features), "
                                 f"got shape {matrix.shape}.")
        self.sparse = sp.issparse(matrix)
        self.n_items = matrix.shape[0]
        self.similarity = similarity
        if similarity == "cosine":
            norms = np.sqrt(_row_dot(matrix, matrix))
            scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
            self.matrix = (sp.diags_array(scale) @ matrix).tocsr() if self.sparse \
                else matrix * scale[:, None]
        elif similarity == "jaccard":
            self.matrix = (matrix != 0).astype(np.float64)
            if self.sparse:
                self.matrix = sp.csr_array(self.matrix)
            self.sizes = _row_dot(self.matrix, self.matrix)
        else:  # hamming: rectools' count of differing values
            self.matrix = matrix

    def rows(self, codes: np.ndarray):
        return self.matrix[codes]

    def padded(self) -> np.ndarray:
        """The dense rows with a zero row appended (index -1)."""
        if not hasattr(self, "_padded"):
            self._padded = np.vstack([self.matrix, np.zeros((1, self.matrix.shape[1]))])
        return self._padded

    def gram_keys(self):
        """For sparse rows whose Gram matrix is affordable (at most ``_GRAM``
        products), the Gram matrix as sorted keys ``i * n_items + j`` and
        values, so a pair's dot product is one lookup; else None."""
        if not hasattr(self, "_gram"):
            self._gram = None
            if self.sparse and self.similarity != "hamming":
                per_column = np.bincount(self.matrix.indices, minlength=self.matrix.shape[1])
                if float(per_column.astype(np.float64) @ per_column) <= _GRAM:
                    gram = (self.matrix @ self.matrix.T).tocsr()
                    gram.sort_indices()
                    rows = np.repeat(np.arange(self.n_items, dtype=np.int64), np.diff(gram.indptr))
                    self._gram = rows * self.n_items + gram.indices, gram.data
        return self._gram

    def _dot(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        gram = self.gram_keys()
        if gram is None:
            return _row_dot(self.rows(a), self.rows(b))
        keys, values = gram
        if keys.size == 0:
            return np.zeros(a.size)
        wanted = a.astype(np.int64) * self.n_items + b
        at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        return np.where(keys[at] == wanted, values[at], 0.0)

    def similarity_of(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        dot = self._dot(a, b)
        if self.similarity == "cosine":
            return dot
        union = self.sizes[a] + self.sizes[b] - dot
        return np.divide(dot, union, out=np.zeros_like(dot), where=union > 0)

    def distance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.similarity == "hamming":
            diff = self.rows(a) != self.rows(b)
            return np.asarray(diff.sum(axis=1), dtype=np.float64).ravel()
        return 1.0 - self.similarity_of(a, b)


def _row_dot(x, y) -> np.ndarray:
    """Row-wise dot products of two equally shaped dense or sparse matrices."""
    if _is_sparse(x):
        return np.asarray(x.multiply(y).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", x, y)


def _is_sparse(x) -> bool:
    return type(x).__module__.startswith("scipy.sparse")


def _squared_norm_of_sums(features: _Features, rows: np.ndarray) -> np.ndarray:
    """Per row of ``rows`` (item codes, -1 padded), the squared norm of the sum
    of its items' feature rows."""
    if not features.sparse:  # a zero row appended: the padding -1 picks it
        padded = features.padded()
        summed = np.zeros((rows.shape[0], padded.shape[1]))
        for column in rows.T:  # (a loop over ranks, not users)
            summed += padded[column]
        return np.einsum("ij,ij->i", summed, summed)
    valid = rows >= 0
    csr = features.matrix
    r, c = np.nonzero(valid)
    items = rows[r, c]
    starts = csr.indptr[items]
    lengths = csr.indptr[items + 1] - starts
    ends = np.cumsum(lengths)
    pos = np.arange(ends[-1] if ends.size else 0) + np.repeat(starts - (ends - lengths), lengths)
    cell = np.repeat(r.astype(np.int64), lengths) * csr.shape[1] + csr.indices[pos]
    values = csr.data[pos]
    n_cells = rows.shape[0] * csr.shape[1]
    if n_cells <= 4 * _CHUNK:  # the summed rows fit densely
        sums = np.bincount(cell, weights=values, minlength=n_cells).reshape(rows.shape[0], -1)
        return np.einsum("ij,ij->i", sums, sums)
    order = np.argsort(cell, kind="stable")
    cell, values = cell[order], values[order]
    first = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]]) if cell.size else cell
    sums = np.add.reduceat(values, first) if cell.size else values
    return np.bincount(cell[first] // csr.shape[1], weights=sums * sums,
                       minlength=rows.shape[0])


def _pairs_within(valid: np.ndarray):
    """Row, first and second column of every pair ``r < s`` of valid entries."""
    k = valid.shape[1]
    first, second = np.triu_indices(k, 1)
    both = valid[:, first] & valid[:, second]
    row, pair = np.nonzero(both)
    return row, first[pair], second[pair]


@validate_params({"top": ["array-like"], "item_features": ["array-like", "sparse matrix"],
                  "similarity": [StrOptions({"cosine", "jaccard", "hamming"})],
                  "convention": [StrOptions({"recommenders", "rectools"}), None]})
def ild(top, item_features, *, similarity: str = "cosine",
        convention: str | None = None) -> np.ndarray:
    r"""Per user, the intra-list diversity: the mean distance over pairs of listed items.

    .. math:: \mathrm{ILD@k}(u) = \frac{2}{|L_u|(|L_u|-1)}
              \sum_{\{i, j\} \subseteq L_u} \bigl(1 - \mathrm{sim}(i, j)\bigr)

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    item_features : {array-like, sparse matrix} of shape (n_items, n_features)
        One row per item code. :func:`cooccurrence_features` gives the rows
        Microsoft Recommenders uses by default (items' training users).
    similarity : {'cosine', 'jaccard', 'hamming'}, default='cosine'
        'cosine': cosine similarity of the rows (0 for an all-zero row, as
        :func:`sklearn.metrics.pairwise.cosine_similarity`); 'jaccard': of the
        sets of nonzero features (0 when both are empty); 'hamming': the
        distance itself is the number of features whose values differ
        (rectools' ``PairwiseHammingDistanceCalculator``).
    convention : {'recommenders', 'rectools'}, default=None
        None and 'recommenders' (``user_diversity``, pairs of distinct items)
        give NaN to lists of fewer than 2 items; 'rectools'
        (``IntraListDiversity``) gives 0 to a list of one item.

    Returns
    -------
    ndarray of shape (n_users,)

    Notes
    -----
    With cosine similarity the sum over pairs is computed from the sum of the
    normalised rows, :math:`\sum_{i<j} \hat f_i \cdot \hat f_j =
    (\lVert\sum_i \hat f_i\rVert^2 - \sum_i \lVert\hat f_i\rVert^2) / 2`, in
    O(k d) per user rather than O(k² d).

    References
    ----------
    C.-N. Ziegler, S. M. McNee, J. A. Konstan and G. Lausen, "Improving
    recommendation lists through topic diversification", WWW 2005.

    Examples
    --------
    >>> features = [[1, 0], [0, 1], [1, 1]]
    >>> ild([[0, 1, 2], [0, -1, -1]], features).round(4)
    array([0.5286,    nan])
    """
    top = _top(top)
    features = _Features(item_features, similarity)
    _check_codes(top, features.n_items, "item_features")
    valid = top >= 0
    n = valid.sum(axis=1).astype(np.float64)
    n_pairs = n * (n - 1) / 2
    total = np.zeros(top.shape[0])
    width = features.matrix.shape[1]
    if similarity == "cosine":
        squares = _row_dot(features.matrix, features.matrix)
        codes = np.where(valid, top, 0)
        if features.sparse:
            nnz = np.diff(features.matrix.indptr)
            work = np.where(valid, nnz[codes], 0).sum(axis=1) + top.shape[1]
        else:
            work = np.full(top.shape[0], top.shape[1] * width)
        for rows in _chunks_by_work(work):
            self_dot = np.where(valid[rows], squares[codes[rows]], 0.0).sum(axis=1)
            total[rows] = n_pairs[rows] - (_squared_norm_of_sums(features, top[rows])
                                           - self_dot) / 2
    else:
        per_row = top.shape[1] * (top.shape[1] - 1) // 2 * (1 if features.sparse else width)
        for rows in _chunks(top.shape[0], per_row):
            row, first, second = _pairs_within(valid[rows])
            chunk = top[rows]
            dist = features.distance(chunk[row, first], chunk[row, second])
            total[rows] = np.bincount(row, weights=dist, minlength=chunk.shape[0])
    value = np.divide(total, n_pairs, out=np.full(n.shape, np.nan), where=n_pairs > 0)
    if convention == "rectools":
        value[n == 1] = 0.0
    return value


def cooccurrence_features(user_codes, item_codes, n_items: int, n_users: int | None = None):
    """Items' training users as sparse feature rows (n_items, n_users), binary.

    The cosine similarity of two rows is :math:`|U_i \\cap U_j| /
    \\sqrt{|U_i|\\,|U_j|}`, the co-occurrence similarity Microsoft
    Recommenders uses for ``diversity`` and ``serendipity`` by default
    (``item_sim_measure='item_cooccurrence_count'``).

    Parameters
    ----------
    user_codes, item_codes : array-like of int, shape (n_interactions,)
        The training interactions (duplicates count once).
    n_items : int
        Number of item codes (rows).
    n_users : int, default=None
        Number of user codes (columns); None: the largest code + 1.

    Returns
    -------
    scipy.sparse.csr_array of shape (n_items, n_users)

    Examples
    --------
    >>> cooccurrence_features([0, 0, 1], [0, 1, 1], n_items=3).toarray()
    array([[1., 0.],
           [1., 1.],
           [0., 0.]])
    """
    user_codes = np.asarray(user_codes, dtype=np.int64).ravel()
    item_codes = np.asarray(item_codes, dtype=np.int64).ravel()
    users, items = _distinct_pairs(user_codes, item_codes, n_items)
    n_users = int(users.max()) + 1 if n_users is None and users.size else (n_users or 0)
    return _select_pairs(items, users, n_items, n_users)


# -- serendipity ----------------------------------------------------------------------------

def _history(history) -> tuple[np.ndarray, np.ndarray]:
    if history is None:
        raise ValueError("this serendipity convention needs history=(user_codes, item_codes) "
                         "of the training interactions.")
    users, items = (np.asarray(h, dtype=np.int64).ravel() for h in history)
    if users.shape != items.shape:
        raise ValueError("history must be (user_codes, item_codes) of equal lengths.")
    return users, items


def _unexpected_baseline(top: np.ndarray, expected) -> np.ndarray:
    """Whether each top item is absent from the same user's ``expected`` list."""
    if expected is None:
        raise ValueError("serendipity needs expected=: a baseline's top array of the same users "
                         "(or convention='recommenders'/'kaminskas_bridge' with history=).")
    expected = _top(expected)
    if expected.shape[0] != top.shape[0]:
        raise ValueError(f"expected has {expected.shape[0]} rows (users) but top has "
                         f"{top.shape[0]}: they must list the same users in the same order.")
    # Keys row * width + item + 1 of each row's sorted expected items are sorted
    # across rows too, so one searchsorted finds each top entry in its own row.
    out = np.ones(top.shape, dtype=bool)
    if expected.shape[1] == 0:
        return out
    width = np.int64(max(int(top.max(initial=-1)), int(expected.max(initial=-1))) + 2)
    for rows in _chunks(top.shape[0], top.shape[1] + expected.shape[1]):
        offset = np.arange(rows.start, rows.stop, dtype=np.int64)[:, None] * width
        keys = (np.sort(expected[rows], axis=1) + 1 + offset).ravel()
        wanted = top[rows] + 1 + offset
        at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        out[rows] = (keys[at] != wanted) | (top[rows] < 0)
    return out


def _unexpected_history(top, history, features: _Features, reduce: str) -> np.ndarray:
    """Per top entry, 1 - the mean ('mean') similarity to the user's distinct
    training items, or the least distance to them ('min'); NaN for users
    without history and for padding."""
    _check_codes(top, features.n_items, "item_features")
    users, items = history
    keep = (users >= 0) & (users < top.shape[0])  # training users without a list
    users, items = users[keep], items[keep]
    if items.size and (items.min() < 0 or items.max() >= features.n_items):
        raise ValueError(f"history holds item codes outside 0..{features.n_items - 1}, the rows "
                         f"of item_features.")
    users, items = _distinct_pairs(users, items, features.n_items)
    n_hist = np.bincount(users, minlength=top.shape[0])
    starts = np.concatenate([[0], np.cumsum(n_hist)])
    valid = top >= 0
    out = np.full(top.shape, np.nan)
    # Dense rows: the mean similarity to the history is the listed item's row
    # dotted with the sum of the history's rows. Sparse rows, and the least
    # distance: every (listed item, history item) pair, its similarity looked up
    # in the items' Gram matrix when affordable. Work per user bounds the chunks.
    if features.sparse:
        nnz = np.diff(features.matrix.indptr).astype(np.float64)
    else:
        nnz = np.full(features.n_items, float(features.matrix.shape[1]))
    hist_nnz = np.bincount(users, weights=nnz[items], minlength=top.shape[0])
    top_nnz = np.where(valid, nnz[np.where(valid, top, 0)], 0.0).sum(axis=1)
    n_valid = valid.sum(axis=1)
    if reduce == "mean" and not features.sparse:
        work = n_valid * hist_nnz + top_nnz + top.shape[1]
    elif features.gram_keys() is not None:
        work = n_valid * n_hist + top.shape[1]
    else:
        work = n_valid * hist_nnz + n_hist * top_nnz + top.shape[1]
    for rows in _chunks_by_work(work):
        chunk = top[rows]
        r, c = np.nonzero(valid[rows])
        user = r + rows.start
        if reduce == "mean" and not features.sparse:
            lo, hi = starts[rows.start], starts[rows.stop]
            hist = _select_pairs(users[lo:hi] - rows.start, items[lo:hi],
                                 rows.stop - rows.start, features.n_items)
            summed = hist @ features.matrix  # per user, the sum of its history's rows
            sim = _row_dot(features.rows(chunk[r, c]), summed[r])
            value = 1.0 - sim / np.maximum(n_hist[user], 1)
        else:
            counts = n_hist[user]
            entry = np.repeat(np.arange(r.size), counts)
            offset = np.arange(entry.size) - np.repeat(np.cumsum(counts) - counts, counts)
            listed, held = chunk[r, c][entry], items[starts[user][entry] + offset]
            if reduce == "mean":  # sparse rows: pairwise similarities, summed
                sim = np.bincount(entry, weights=features.similarity_of(listed, held),
                                  minlength=r.size)
                value = 1.0 - sim / np.maximum(counts, 1)
            else:
                value = np.full(r.size, np.inf)
                np.minimum.at(value, entry, features.distance(listed, held))
        block = np.full(chunk.shape, np.nan)
        block[r, c] = value
        out[rows] = block
    out[n_hist[: top.shape[0]] == 0] = np.nan
    return out


def _select_pairs(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int):
    """Sparse (n_rows, n_cols) matrix with a 1 at each ``(rows[j], cols[j])``."""
    import scipy.sparse as sp

    return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n_rows, n_cols))


def _rectools_surprise(top: np.ndarray, popularity, n_catalog) -> np.ndarray:
    """rectools' ``Serendipity`` term per entry: max(p_user(rank) - p_any(item), 0)."""
    pop = _popularity(popularity)
    if n_catalog is None:
        raise ValueError("convention='rectools' needs n_catalog= (rectools' len(catalog)).")
    _check_codes(top, pop.interactions.size, "popularity")
    counts = pop.interactions
    distinct = np.unique(counts[counts > 0])[::-1]  # dense popularity rank, most popular 1
    rank_of = np.zeros(counts.size)
    seen = counts > 0
    rank_of[seen] = np.searchsorted(-distinct, -counts[seen]) + 1
    p_any = np.where(seen, (n_catalog + 1 - rank_of) / n_catalog, 0.0)
    rank = np.arange(1, top.shape[1] + 1, dtype=np.float64)
    p_user = (n_catalog + 1 - rank) / n_catalog
    return np.maximum(p_user[None, :] - p_any[np.where(top >= 0, top, 0)], 0.0)


@validate_params({
    "top": ["array-like"], "relevant": ["array-like"], "expected": ["array-like", None],
    "history": [tuple, list, None],
    "convention": [StrOptions({"recommenders", "kaminskas_bridge", "rectools"}), None],
    "item_features": ["array-like", "sparse matrix", None],
    "similarity": [StrOptions({"cosine", "jaccard"}), None],
    "popularity": [Popularity, None], "n_catalog": [_COUNT, None],
})
def serendipity(top, relevant, *, expected=None, history=None, convention: str | None = None,
                item_features=None, similarity: str | None = None,
                popularity: Popularity | None = None,
                n_catalog: int | None = None) -> np.ndarray:
    r"""Per user, the share of the list that is both relevant and unexpected.

    .. math:: \mathrm{serendipity@k}(u) = \frac{1}{|L_u|}
              \sum_{i \in L_u} \mathrm{rel}(u, i)\, \mathrm{unexp}(u, i)

    By default (Ge et al., Murakami et al.) an item is unexpected when the
    baseline recommender's list for the same user (``expected``, e.g. a
    most-popular model) does not contain it: :math:`\mathrm{unexp} \in \{0, 1\}`.

    Parameters
    ----------
    top : array-like of shape (n_users, k)
        Recommended item codes per user in rank order, padded with -1.
    relevant : array-like of bool, shape (n_users, k)
        Whether each listed item is relevant to the user in the test set.
    expected : array-like of shape (n_users, k'), default=None
        The baseline's top lists of the same users (-1 padded); needed by the
        default convention.
    history : (user_codes, item_codes), default=None
        The training interactions; needed by 'recommenders' and
        'kaminskas_bridge'.
    convention : {'recommenders', 'kaminskas_bridge', 'rectools'}, default=None
        'recommenders': Microsoft Recommenders' ``user_serendipity``,
        :math:`\mathrm{unexp}(u, i) = 1 - \frac{1}{|H_u|}\sum_{j \in H_u}
        \mathrm{sim}(i, j)` over the user's distinct training items
        :math:`H_u`, with the co-occurrence cosine of
        :func:`cooccurrence_features` unless ``item_features`` is given
        (its ``item_feature_vector``).
        'kaminskas_bridge': the surprise of Kaminskas & Bridge,
        :math:`\mathrm{unexp}(u, i) = \min_{j \in H_u} (1 - \mathrm{sim}(i, j))`,
        the distance to the closest training item, over ``item_features``
        (Jaccard of the feature sets by default, as their content-based
        distance).
        'rectools': rectools' ``Serendipity``,
        :math:`\max(p_u(r) - p(i), 0)` with :math:`p_u(r) = (n + 1 - r)/n` for
        rank :math:`r`, :math:`p(i) = (n + 1 - \mathrm{poprank}(i))/n` (dense
        rank of the training interaction count, most popular 1; 0 for items
        never seen) and :math:`n` = ``n_catalog``.
    item_features : {array-like, sparse matrix} of shape (n_items, d), default=None
        Item rows for the similarity of 'recommenders' and 'kaminskas_bridge'.
    similarity : {'cosine', 'jaccard'}, default=None
        None: cosine, Jaccard for 'kaminskas_bridge'.
    popularity : Popularity, default=None
        Training popularity, for 'rectools'.
    n_catalog : int, default=None
        Catalog size, for 'rectools'.

    Returns
    -------
    ndarray of shape (n_users,)
        NaN for users with an empty list, and for 'recommenders' and
        'kaminskas_bridge' users without training history.

    References
    ----------
    M. Ge, C. Delgado-Battenfeld and D. Jannach, "Beyond accuracy: evaluating
    recommender systems by coverage and serendipity", RecSys 2010.
    Y. C. Zhang, D. Ó Séaghdha, D. Quercia and T. Jambor, "Auralist:
    introducing serendipity into music recommendation", WSDM 2012.
    M. Kaminskas and D. Bridge, "Measuring surprise in recommender systems",
    RecSys REDD workshop 2014.

    Examples
    --------
    >>> top = [[0, 1, 2], [3, -1, -1]]
    >>> relevant = [[True, True, False], [True, False, False]]
    >>> serendipity(top, relevant, expected=[[0, 4], [5, 6]]).round(4)
    array([0.3333, 1.    ])
    """
    top = _top(top)
    relevant = np.asarray(relevant)
    if relevant.shape != top.shape:
        raise ValueError(f"relevant must have the shape of top {top.shape}, got "
                         f"{relevant.shape}.")
    valid = top >= 0
    relevant = relevant.astype(bool) & valid
    if convention is None:
        unexpected = _unexpected_baseline(top, expected).astype(np.float64)
    elif convention == "rectools":
        unexpected = _rectools_surprise(top, popularity, n_catalog)
    else:
        users, items = _history(history)
        if convention == "kaminskas_bridge" and item_features is None:
            raise ValueError("convention='kaminskas_bridge' needs item_features= (the content "
                             "features its distance compares).")
        if item_features is None:
            n_items = max(int(top.max(initial=-1)), int(items.max(initial=-1))) + 1
            item_features = cooccurrence_features(users, items, n_items)
        kind = similarity or ("jaccard" if convention == "kaminskas_bridge" else "cosine")
        unexpected = _unexpected_history(top, (users, items), _Features(item_features, kind),
                                         "mean" if convention == "recommenders" else "min")
    value = _user_mean(np.where(relevant, unexpected, 0.0), valid)
    if convention in ("recommenders", "kaminskas_bridge"):
        value[np.isnan(unexpected).all(axis=1)] = np.nan  # no history
    return value


#: name -> (function, "system" | "user")
BEYOND: dict[str, tuple[Callable, str]] = {
    "catalog_coverage": (catalog_coverage, "system"),
    "gini": (gini, "system"),
    "entropy": (entropy, "system"),
    "novelty": (novelty, "user"),
    "arp": (arp, "user"),
    "tail_share": (tail_share, "user"),
    "ild": (ild, "user"),
    "serendipity": (serendipity, "user"),
}
