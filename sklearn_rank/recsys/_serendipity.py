"""Serendipity of top-k lists: relevant and unexpected items (:func:`serendipity`).

Unexpected with respect to a baseline's lists (the default, Ge et al.), the
user's training history (Microsoft Recommenders' and Kaminskas & Bridge's
presets) or item popularity (rectools'); see the function's Notes.
"""

from __future__ import annotations

import numpy as np

from .._utils.validation import StrOptions, validate_params
from ._arrays import (
    COUNT,
    Popularity,
    check_codes,
    chunks,
    chunks_by_work,
    distinct_pairs,
    popularity_of,
    select_pairs,
    top_array,
    user_mean,
)
from ._diversity import Features, cooccurrence_features, row_dot

__all__ = ["serendipity"]


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
    expected = top_array(expected)
    if expected.shape[0] != top.shape[0]:
        raise ValueError(f"expected has {expected.shape[0]} rows (users) but top has "
                         f"{top.shape[0]}: they must list the same users in the same order.")
    # Keys row * width + item + 1 of each row's sorted expected items are sorted
    # across rows too, so one searchsorted finds each top entry in its own row.
    out = np.ones(top.shape, dtype=bool)
    if expected.shape[1] == 0:
        return out
    width = np.int64(max(int(top.max(initial=-1)), int(expected.max(initial=-1))) + 2)
    for rows in chunks(top.shape[0], top.shape[1] + expected.shape[1]):
        offset = np.arange(rows.start, rows.stop, dtype=np.int64)[:, None] * width
        keys = (np.sort(expected[rows], axis=1) + 1 + offset).ravel()
        wanted = top[rows] + 1 + offset
        at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        out[rows] = (keys[at] != wanted) | (top[rows] < 0)
    return out


def _unexpected_history(top, history, features: Features, reduce: str) -> np.ndarray:
    """Per top entry, 1 - the mean ('mean') similarity to the user's distinct
    training items, or the least distance to them ('min'); NaN for users
    without history and for padding."""
    check_codes(top, features.n_items, "item_features")
    users, items = history
    keep = (users >= 0) & (users < top.shape[0])  # training users without a list
    users, items = users[keep], items[keep]
    if items.size and (items.min() < 0 or items.max() >= features.n_items):
        raise ValueError(f"history holds item codes outside 0..{features.n_items - 1}, the rows "
                         f"of item_features.")
    users, items = distinct_pairs(users, items, features.n_items)
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
    for rows in chunks_by_work(work):
        chunk = top[rows]
        r, c = np.nonzero(valid[rows])
        user = r + rows.start
        if reduce == "mean" and not features.sparse:
            lo, hi = starts[rows.start], starts[rows.stop]
            hist = select_pairs(users[lo:hi] - rows.start, items[lo:hi],
                                 rows.stop - rows.start, features.n_items)
            summed = hist @ features.matrix  # per user, the sum of its history's rows
            sim = row_dot(features.rows(chunk[r, c]), summed[r])
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


def _rectools_surprise(top: np.ndarray, popularity, n_catalog) -> np.ndarray:
    """rectools' ``Serendipity`` term per entry: max(p_user(rank) - p_any(item), 0)."""
    pop = popularity_of(popularity)
    if n_catalog is None:
        raise ValueError("convention='rectools' needs n_catalog= (rectools' len(catalog)).")
    check_codes(top, pop.interactions.size, "popularity")
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
    "popularity": [Popularity, None], "n_catalog": [COUNT, None],
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
    top = top_array(top)
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
        unexpected = _unexpected_history(top, (users, items), Features(item_features, kind),
                                         "mean" if convention == "recommenders" else "min")
    value = user_mean(np.where(relevant, unexpected, 0.0), valid)
    if convention in ("recommenders", "kaminskas_bridge"):
        value[np.isnan(unexpected).all(axis=1)] = np.nan  # no history
    return value
