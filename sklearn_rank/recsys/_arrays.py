"""The arrays the beyond-accuracy metrics share: top lists, training popularity, chunks.

Interface: :class:`Popularity` (an item's training interactions and users),
``top_array`` and ``check_codes`` (a ``top`` argument as an int64 array of
item codes, ``-1`` padding), ``user_mean`` (a per-user mean over the valid
cells), ``chunks``/``chunks_by_work`` (slices of users whose temporaries hold
about ``CHUNK`` elements), ``distinct_pairs``, ``select_pairs``,
``sorted_unique``, ``popularity_of`` and ``COUNT`` (a positive count's
constraint), used by :mod:`._beyond`, :mod:`._diversity` and
:mod:`._serendipity`.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from .._utils.validation import Interval

__all__ = ["CHUNK", "COUNT", "Popularity", "check_codes", "chunks", "chunks_by_work",
           "distinct_pairs", "popularity_of", "select_pairs", "top_array", "user_mean"]

#: Work (array elements) per chunk of users: bounds the temporaries.
CHUNK = 1 << 22


COUNT = Interval(Integral, 1, None, closed="left")


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
        users, items = distinct_pairs(user_codes, item_codes, n_items)
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


def distinct_pairs(user_codes: np.ndarray, item_codes: np.ndarray, n_items: int):
    """The distinct ``(user, item)`` pairs, sorted by user then item."""
    key = _sorted_unique(user_codes * np.int64(max(n_items, 1)) + item_codes)
    return key // max(n_items, 1), key % max(n_items, 1)


def top_array(top) -> np.ndarray:
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


def check_codes(top: np.ndarray, n_items: int, name: str) -> None:
    if top.size and top.max() >= n_items:
        raise ValueError(f"top holds item code {int(top.max())} but {name} covers only "
                         f"{n_items} items (codes 0..{n_items - 1}).")


def user_mean(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row, the mean of ``values`` over the ``valid`` entries; NaN for none."""
    n = valid.sum(axis=1)
    total = np.where(valid, values, 0.0).sum(axis=1)
    return np.divide(total, n, out=np.full(n.shape, np.nan), where=n > 0)


def chunks(n_rows: int, per_row: int):
    """Slices of rows so that a chunk holds about ``CHUNK`` elements."""
    step = max(1, CHUNK // max(per_row, 1))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


def chunks_by_work(work: np.ndarray):
    """Slices of rows whose summed ``work`` stays about ``CHUNK`` (one row at least)."""
    ends = np.cumsum(work, dtype=np.float64)
    start = 0
    while start < work.size:
        done = ends[start - 1] if start else 0.0
        stop = int(np.searchsorted(ends, done + CHUNK, side="right"))
        stop = min(max(stop, start + 1), work.size)
        yield slice(start, stop)
        start = stop


def popularity_of(popularity) -> Popularity:
    if not isinstance(popularity, Popularity):
        raise TypeError(f"popularity must be a Popularity (Popularity.from_codes(user_codes, "
                        f"item_codes, n_items)), got {type(popularity).__name__}.")
    return popularity


def select_pairs(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int):
    """Sparse (n_rows, n_cols) matrix with a 1 at each ``(rows[j], cols[j])``."""
    import scipy.sparse as sp

    return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n_rows, n_cols))
