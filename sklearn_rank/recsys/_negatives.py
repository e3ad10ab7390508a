"""Negative items sampled per user for sampled evaluation (:func:`sample_negatives`).

Interface: :func:`sample_negatives` (uniform draws without replacement among a
user's candidates: the catalogue less its positives and excluded items),
``pairs`` (a ``(user_codes, item_codes)`` argument, checked), ``excluded_keys``
and ``n_candidates_of`` (each user's number of candidates, which the
Krichene & Rendle correction needs), ``COUNT`` and ``SEED`` (constraints),
used by :mod:`._sampled`.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._utils.validation import Interval, validate_params

__all__ = ["COUNT", "SEED", "excluded_keys", "n_candidates_of", "pairs", "sample_negatives"]


def pairs(pairs, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(user_codes, item_codes)`` as two int64 arrays of equal length."""
    try:
        users, items = pairs
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (user_codes, item_codes) of equal-length "
                         "integer arrays.") from None
    users, items = np.asarray(users), np.asarray(items)
    if users.ndim != 1 or users.shape != items.shape:
        raise ValueError(f"{name} must be a pair (user_codes, item_codes) of 1-D arrays of "
                         f"equal length; got shapes {users.shape} and {items.shape}.")
    for codes, what in ((users, "user"), (items, "item")):
        if codes.size and codes.dtype.kind not in "iu":
            raise ValueError(f"{name}'s {what} codes must be integers; got dtype "
                             f"{codes.dtype}.")
        if codes.size and codes.min() < 0:
            raise ValueError(f"{name}'s {what} codes must be >= 0; got {int(codes.min())}.")
    return users.astype(np.int64), items.astype(np.int64)


def excluded_keys(positives, exclude, n_items: int) -> np.ndarray:
    """The distinct (user, item) pairs of ``positives`` and ``exclude`` as
    sorted keys user * n_items + item (item codes checked)."""
    users, items = pairs(positives, "positives")
    if exclude is not None:
        more_users, more_items = pairs(exclude, "exclude")
        users, items = np.concatenate([users, more_users]), np.concatenate([items, more_items])
    if items.size and (items.min() < 0 or items.max() >= n_items):
        raise ValueError(f"Item codes must lie in 0..n_items - 1 = {n_items - 1}; got "
                         f"{int(items.min() if items.min() < 0 else items.max())}.")
    return np.unique(users * n_items + items)


def n_candidates_of(excluded: np.ndarray, users: np.ndarray, n_items: int):
    """Per user: where its excluded keys start, how many there are, and its
    number of candidate negatives (the other items of the catalogue)."""
    ex_user = excluded // n_items
    starts = np.searchsorted(ex_user, users, side="left")
    counts = np.searchsorted(ex_user, users, side="right") - starts
    return ex_user, starts, n_items - counts


COUNT = Interval(Integral, 1, None, closed="left")


SEED = [Interval(Integral, 0, None, closed="left"), np.random.Generator]


@validate_params({
    "users": ["array-like"],
    "positives": [tuple, list],
    "n_items": [COUNT],
    "n_negatives": [COUNT],
    "seed": SEED,
    "exclude": [tuple, list, None],
})
def sample_negatives(users, positives, n_items: int, n_negatives: int, *, seed=0,
                     exclude=None) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n_negatives`` distinct negative items for each user, uniformly.

    A user's candidates are the catalogue's items ``0..n_items - 1`` other
    than its positives and the items of ``exclude`` (its training items);
    each user's negatives are drawn without replacement among them, with
    NumPy's generator seeded by ``seed`` (the same inputs and seed give the
    same negatives).

    Parameters
    ----------
    users : array-like of int
        The users to sample for (distinct codes).
    positives : tuple (user_codes, item_codes)
        The test positives of the users: never sampled as negatives.
    n_items : int
        Size of the catalogue.
    n_negatives : int
        Negatives per user.
    seed : int or numpy.random.Generator, default=0
    exclude : tuple (user_codes, item_codes), default=None
        Other items no user may get as a negative (e.g. its training items).

    Returns
    -------
    user_codes, item_codes : ndarray of shape (len(users) * n_negatives,)
        Each user's negatives, users in the order given, ``n_negatives``
        rows each.

    Raises
    ------
    ValueError
        When a user has fewer candidates than ``n_negatives`` (naming it), or
        for codes outside the catalogue.

    Examples
    --------
    >>> from sklearn_rank.recsys import sample_negatives
    >>> users, items = sample_negatives([0, 1], ([0, 1], [3, 4]), n_items=6,
    ...                                 n_negatives=5, seed=0)
    >>> sorted(items[users == 0].tolist())  # every item but the positive 3
    [0, 1, 2, 4, 5]
    """
    users = np.asarray(users, dtype=np.int64).ravel()
    if not isinstance(n_items, Integral) or n_items < 1:
        raise ValueError(f"n_items must be a positive integer; got {n_items!r}.")
    if np.unique(users).shape[0] != users.shape[0]:
        raise ValueError("users must be distinct user codes.")
    rng = np.random.default_rng(seed)
    excluded = excluded_keys(positives, exclude, n_items)
    ex_user, _, candidates = n_candidates_of(excluded, users, n_items)
    short = candidates < n_negatives
    if short.any():
        first = int(np.flatnonzero(short)[0])
        raise ValueError(
            f"User {int(users[first])} has {int(candidates[first])} candidate negatives (the "
            f"catalogue less its positives and excluded items), fewer than "
            f"n_negatives={n_negatives}; lower n_negatives.")
    index = _distinct_indices(rng, candidates, n_negatives)  # (n_users, n_negatives)
    # the index-th candidate of a user: index + the excluded items at or below it
    # (excluded e_j at 0-based place j is passed when e_j - j <= index)
    place = np.arange(excluded.shape[0]) - np.searchsorted(ex_user, ex_user, side="left")
    shifted = ex_user * n_items + (excluded % n_items - place)
    row_user = np.repeat(users, n_negatives)
    query = row_user * n_items + index.ravel()
    passed = np.searchsorted(shifted, query, side="right") - np.repeat(
        np.searchsorted(shifted, users * n_items, side="left"), n_negatives)
    return row_user, index.ravel() + passed


def _distinct_indices(rng, sizes: np.ndarray, n: int) -> np.ndarray:
    """(len(sizes), n) indices, row i drawn uniformly without replacement from
    ``range(sizes[i])``: random draws with the repeats drawn again (few when n
    is small beside the size; the procedure is symmetric in the values, so
    every set of n is equally likely), a random permutation where n is a
    large part of the size."""
    out = np.empty((sizes.shape[0], n), dtype=np.int64)
    dense = sizes < 4 * n
    for i in np.flatnonzero(dense):  # small candidate sets: a permutation each
        out[i] = rng.permutation(int(sizes[i]))[:n]
    rows = np.flatnonzero(~dense)
    if rows.shape[0]:
        draw = np.floor(rng.random((rows.shape[0], n)) * sizes[rows, None]).astype(np.int64)
        while True:  # redraw one of each pair of equal draws until a row has none
            order = np.argsort(draw, axis=1, kind="stable")
            srt = np.take_along_axis(draw, order, axis=1)
            r, c = np.nonzero(srt[:, 1:] == srt[:, :-1])
            if not r.shape[0]:
                break
            draw[r, order[r, c + 1]] = np.floor(rng.random(r.shape[0]) * sizes[rows[r]])
        out[rows] = draw
    return out
