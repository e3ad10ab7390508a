"""Top-k lists from coded recommendation rows, and their relevance in the test set.

Everything here works on integer codes (:mod:`~sklearn_rank.recsys._frames`
makes them): user codes 0..n_users-1, item codes 0..n_items-1 and each
item's tie-break key (its position among the item ids sorted). A user's rows
are ranked by decreasing score, equal scores by increasing item id; the
items the user saw in training are removed first (when asked), then the list
is cut at k. The result is the ``top`` array of the beyond-accuracy metrics:
shape (n_users, k), item codes in rank order, -1 after a short list.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._utils.runs import runs_of

__all__ = ["Lists", "duplicate_error", "grouped", "pair_keys", "rank_lists", "test_layout"]

#: The 2-D layout (one row per user, padded to the longest list) is used when
#: it holds at most this many cells per row of input; else one sort of all rows.
PAD_FACTOR = 3
#: Cells of the 2-D layout ranked at once.
_BLOCK_CELLS = 1 << 21


def grouped(user: np.ndarray, n_users: int) -> tuple[np.ndarray | None, np.ndarray]:
    """The order that groups rows by user code, stable (None: already grouped
    in increasing code order), and each user's number of rows."""
    counts = np.bincount(user, minlength=n_users)
    if user.shape[0] < 2 or bool(np.all(user[1:] >= user[:-1])):
        return None, counts
    return np.argsort(user, kind="stable"), counts


def duplicate_error(user_ids, item_ids, rows_a: int, rows_b: int, what: str,
                     user_col: str, item_col: str) -> ValueError:
    return ValueError(
        f"{what} lists user {user_ids!r} and item {item_ids!r} twice (rows {rows_a} and "
        f"{rows_b}, counted from 0, in the columns {user_col!r} and {item_col!r}); a "
        f"(user, item) pair must appear once in {what}: drop the duplicates (e.g. "
        f"{what}.drop_duplicates([{user_col!r}, {item_col!r}]), keeping the row you mean).")


@dataclass(frozen=True)
class Lists:
    """Every user's list, cut at k.

    Attributes
    ----------
    top : ndarray of shape (n_users, k)
        Item codes in rank order, -1 after the end of a short list.
    n_recommended : ndarray of shape (n_users,)
        Each user's number of rows in the recommendations (before exclusion).
    """

    top: np.ndarray
    n_recommended: np.ndarray


def rank_lists(user: np.ndarray, item: np.ndarray, score: np.ndarray, key: np.ndarray,
               n_users: int, k: int, seen: np.ndarray | None, where) -> Lists:
    """Rank every user's rows and cut at ``k``.

    Parameters
    ----------
    user, item, score : ndarray of shape (n_rows,)
        User codes, item codes and scores of the recommendation rows.
    key : ndarray of shape (n_items,)
        Each item code's tie-break key (distinct; lower ranks first among equal scores).
    n_users, k : int
    seen : ndarray of shape (n_seen,) or None
        The sorted distinct pair keys ``user * n_items + key[item]`` of the
        training interactions to remove; None keeps every row.
    where : callable
        ``where(row_a, row_b)``: the error for a (user, item) pair at two rows.
    """
    n_keys = key.shape[0]
    order, counts = grouped(user, n_users)
    if order is not None:
        user, item, score = user[order], item[order], score[order]
    rows = np.arange(user.shape[0]) if order is None else order
    longest = int(counts.max()) if counts.shape[0] else 0
    if n_users * longest <= PAD_FACTOR * user.shape[0] + 1024:
        top = _rank_padded(user, item, score, key, counts, longest, k, seen, rows, where)
    else:
        top = _rank_sorted(user, item, score, key, n_users, k, seen, rows, where, n_keys)
    return Lists(top, counts)


def _rank_padded(user, item, score, key, counts, longest, k, seen, rows, where):
    """The 2-D layout: one row per user, padded; rows sorted one by one, in
    blocks of users (memory: a block's cells, not the whole matrix's)."""
    n_users = counts.shape[0]
    starts = np.cumsum(counts) - counts
    top = np.full((n_users, k), -1, dtype=np.int64)
    step = max(1, _BLOCK_CELLS // max(longest, 1))
    for u0 in range(0, n_users, step):
        u1 = min(u0 + step, n_users)
        r0 = int(starts[u0])
        r1 = int(starts[u1 - 1] + counts[u1 - 1])
        top[u0:u1] = _padded_block(user[r0:r1] - u0, item[r0:r1], score[r0:r1], key,
                                   counts[u0:u1], longest, k, seen, u0,
                                   lambda a, b, r0=r0: where(int(rows[r0 + a]),
                                                             int(rows[r0 + b])))
    return top


def _padded_block(user, item, score, key, counts, longest, k, seen, first_user, where):
    """:func:`_rank_padded` on the rows of users ``first_user`` + 0..len(counts)-1
    (``user``: their codes minus ``first_user``)."""
    n_users, n_keys = counts.shape[0], key.shape[0]
    starts = np.cumsum(counts) - counts
    uniform = bool(np.all(counts == longest))
    if uniform:  # every list as long: the rows are the matrix already
        keys = key[item].reshape(n_users, longest)
        neg = np.negative(score).reshape(n_users, longest)
    else:
        col = np.arange(user.shape[0]) - np.repeat(starts, counts)
        keys = np.full((n_users, longest), n_keys, dtype=key.dtype)  # padding: after all
        keys[user, col] = key[item]
        neg = np.full((n_users, longest), np.inf)
        neg[user, col] = -score
    by_item = np.argsort(keys, axis=1, kind="stable")  # each user's items in id order
    keys = np.take_along_axis(keys, by_item, axis=1)
    live = keys < n_keys
    twice = live[:, 1:] & (keys[:, 1:] == keys[:, :-1])
    if twice.any():
        u, c = (int(v[0]) for v in np.nonzero(twice))
        at = starts[u] + by_item[u, [c, c + 1]]
        raise where(int(at[0]), int(at[1]))
    if seen is not None and seen.shape[0]:
        pairs = (np.arange(first_user, first_user + n_users, dtype=np.int64)[:, None]
                 * n_keys + keys)
        live &= ~_member(pairs, seen)
        del pairs
    neg = np.take_along_axis(neg, by_item, axis=1)
    # dead cells (padding, seen items) last; then decreasing score; ties keep item order
    ranked = np.lexsort((neg, ~live), axis=1)[:, :k]
    n_live = live.sum(axis=1)
    top = np.take_along_axis(keys, ranked, axis=1)
    top = _codes_of(top, key)
    top[np.arange(top.shape[1])[None, :] >= n_live[:, None]] = -1
    return _padded_to(top, k)


def _rank_sorted(user, item, score, key, n_users, k, seen, rows, where, n_keys):
    """One sort of all rows by (user, item key) for duplicates and exclusion,
    one by (user, -score, item key) for the lists."""
    pairs = user * np.int64(n_keys) + key[item]
    by_pair = np.argsort(pairs, kind="stable")
    pairs = pairs[by_pair]
    twice = np.flatnonzero(pairs[1:] == pairs[:-1])
    if twice.shape[0]:
        raise where(int(rows[by_pair[twice[0]]]), int(rows[by_pair[twice[0] + 1]]))
    user, item, score = user[by_pair], item[by_pair], score[by_pair]
    if seen is not None and seen.shape[0]:
        keep = ~_member(pairs, seen)
        user, item, score = user[keep], item[keep], score[keep]
    ranked = np.lexsort((-score, user))  # stable: equal scores keep item order
    user, item = user[ranked], item[ranked]
    starts, lengths = runs_of(user)
    position = np.arange(user.shape[0]) - np.repeat(starts, lengths)
    cut = position < k
    top = np.full((n_users, k), -1, dtype=np.int64)
    top[user[cut], position[cut]] = item[cut]
    return top


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Whether each value is in the sorted array ``sorted_set`` (not empty)."""
    at = np.searchsorted(sorted_set, values)
    np.minimum(at, sorted_set.shape[0] - 1, out=at)
    return sorted_set[at] == values


def _codes_of(keys: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Item codes of tie-break keys (padding keys map anywhere: masked by the caller)."""
    code_of_key = np.empty(key.shape[0] + 1, dtype=np.int64)
    code_of_key[key] = np.arange(key.shape[0])
    code_of_key[-1] = -1
    return code_of_key[keys]


def _padded_to(top: np.ndarray, k: int) -> np.ndarray:
    if top.shape[1] == k:
        return top
    out = np.full((top.shape[0], k), -1, dtype=np.int64)
    out[:, :top.shape[1]] = top
    return out


def pair_keys(user: np.ndarray, item: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``user * n_items + key[item]``: one int64 per (user, item) pair, in
    (user, item id) order."""
    return user.astype(np.int64) * np.int64(key.shape[0]) + key[item]


@dataclass(frozen=True)
class TestLayout:
    """The evaluated users' rows for the ranking metrics, as ``ranked_data``
    takes them: each user's list (labels in rank order), then the test items
    the list missed.

    Attributes
    ----------
    labels : ndarray of shape (n_rows,)
    lengths, n_retrieved : ndarray of shape (n_evaluated,)
    top_labels : ndarray of shape (n_evaluated, k)
        The test label of each listed item (0: not in the test set; NaN: no item).
    """

    labels: np.ndarray
    lengths: np.ndarray
    n_retrieved: np.ndarray
    top_labels: np.ndarray


def test_layout(top: np.ndarray, evaluated: np.ndarray, test_user: np.ndarray,
                test_item: np.ndarray, test_label: np.ndarray, key: np.ndarray,
                where) -> TestLayout:
    """Lay out the rows of the ``evaluated`` users (sorted user codes, each
    with a test row): ``top`` is every user's list (rows by user code),
    ``test_*`` the test rows (user and item codes, labels); ``where(row_a,
    row_b)`` is the error for a pair listed twice in the test set."""
    n_users = top.shape[0]
    pairs = pair_keys(test_user, test_item, key)
    by_pair = np.argsort(pairs, kind="stable")
    pairs = pairs[by_pair]
    twice = np.flatnonzero(pairs[1:] == pairs[:-1])
    if twice.shape[0]:
        raise where(int(by_pair[twice[0]]), int(by_pair[twice[0] + 1]))
    labels_sorted = test_label[by_pair]
    users_sorted = test_user[by_pair]
    listed = top[evaluated]
    valid = listed >= 0
    n_ret = valid.sum(axis=1)
    rows, cols = np.nonzero(valid)
    wanted = evaluated[rows].astype(np.int64) * np.int64(key.shape[0]) + key[listed[rows, cols]]
    hit = np.zeros(pairs.shape[0], dtype=bool)
    top_labels = np.where(valid, 0.0, np.nan)
    if pairs.shape[0] and wanted.shape[0]:
        at = np.minimum(np.searchsorted(pairs, wanted), pairs.shape[0] - 1)
        found = pairs[at] == wanted
        top_labels[rows[found], cols[found]] = labels_sorted[at[found]]
        hit[at[found]] = True
    position = np.full(n_users, -1, dtype=np.int64)
    position[evaluated] = np.arange(evaluated.shape[0])
    missed_user = position[users_sorted[~hit]]  # every test user is evaluated
    missed_label = labels_sorted[~hit]
    n_missed = np.bincount(missed_user, minlength=evaluated.shape[0])
    lengths = n_ret + n_missed
    offset = np.cumsum(lengths) - lengths
    labels = np.zeros(int(lengths.sum()))
    labels[offset[rows] + cols] = top_labels[rows, cols]
    starts, runs = runs_of(missed_user)  # (grouped: the test rows are in user order)
    within = np.arange(missed_user.shape[0]) - np.repeat(starts, runs)
    labels[offset[missed_user] + n_ret[missed_user] + within] = missed_label
    return TestLayout(labels, lengths, n_ret, top_labels)
