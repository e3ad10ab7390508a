"""top_k: the recommendations frame from a score matrix, a scoring function or an estimator.

Users are scored in chunks (``batch_size`` users at a time), so memory stays
bounded by a chunk's scores and the k best of every user. Within a user,
items rank by decreasing score, equal scores by increasing item id (the rule
of :func:`~sklearn_rank.recsys.evaluate_recommendations`, so a frame cut here
at k gives the lists it would cut); a user's seen items are removed before
the cut.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._utils.validation import HasMethods, Interval, StrOptions, validate_params
from ._frames import Frame, codes_in, ids_of, read_columns

__all__ = ["top_k"]

#: Scores held at once (float64 cells) when batch_size is None.
_CELLS = 1 << 23


def _ids(values, n: int, what: str) -> np.ndarray:
    if values is None:
        return np.arange(n, dtype=np.int64)
    values = np.asarray(values)
    values = ids_of(values.astype(object) if values.dtype.kind == "U" else values, what, what)
    if values.shape[0] != n:
        raise ValueError(f"{what} has {values.shape[0]} ids but the scores have {n} "
                         f"{'rows' if what == 'users' else 'columns'}.")
    return values


def _seen_matrix(exclude, users: np.ndarray, items: np.ndarray, user_col: str,
                 item_col: str):
    """``exclude`` (a frame of interactions, or a users x items matrix whose
    nonzero cells are seen) as a CSR matrix of booleans, or None."""
    from scipy import sparse

    if exclude is None:
        return None
    if sparse.issparse(exclude) or isinstance(exclude, np.ndarray):
        matrix = sparse.csr_matrix(exclude, dtype=bool)
        if matrix.shape != (users.shape[0], items.shape[0]):
            raise ValueError(f"exclude has shape {matrix.shape} but the scores "
                             f"{(users.shape[0], items.shape[0])}.")
        return matrix
    columns = read_columns(exclude, "exclude", {"user": (user_col, "user_col"),
                                                "item": (item_col, "item_col")})
    u = _codes(ids_of(columns["user"], "exclude", user_col), users)
    i = _codes(ids_of(columns["item"], "exclude", item_col), items)
    keep = (u >= 0) & (i >= 0)  # interactions of other users or items cannot be listed
    return sparse.csr_matrix((np.ones(int(keep.sum()), dtype=bool), (u[keep], i[keep])),
                             shape=(users.shape[0], items.shape[0]))


def _codes(ids: np.ndarray, vocabulary: np.ndarray) -> np.ndarray:
    """Positions of ``ids`` in the (unsorted) ``vocabulary`` (-1: absent)."""
    order = np.argsort(vocabulary, kind="stable")
    at = codes_in(ids, vocabulary[order])
    return np.where(at >= 0, order[np.maximum(at, 0)], -1)


def _dense_top(block: np.ndarray, seen, rank_of_item: np.ndarray, k: int):
    """``(rows, columns)`` of each row's k best cells of a dense block (seen
    cells removed), in rank order: decreasing score, ties by item rank."""
    if np.isnan(block).any():
        row, col = (int(v[0]) for v in np.nonzero(np.isnan(block)))
        raise ValueError(f"The scores hold NaN (user at row {row} of the chunk, item column "
                         f"{col}); score every item, or give NaN-free scores.")
    neg = -block
    if seen is not None:
        dead = seen.toarray()
        neg[dead] = np.inf
    else:
        dead = None
    n_items = block.shape[1]
    if k < n_items:  # the k-th best value of each row: every cell at least as good is kept
        kth = np.partition(neg, k - 1, axis=1)[:, k - 1:k]
        keep = neg <= kth
    else:
        keep = np.ones(block.shape, dtype=bool)
    if dead is not None:
        keep &= ~dead
    rows, cols = np.nonzero(keep)
    order = np.lexsort((rank_of_item[cols], neg[rows, cols], rows))
    rows, cols = rows[order], cols[order]
    return _first_k(rows, cols, k)


def _sparse_top(block, seen, rank_of_item: np.ndarray, k: int):
    """The same for a CSR block: its stored cells are the candidates."""
    block = block.tocoo()
    rows, cols, values = block.row, block.col, block.data.astype(np.float64)
    if np.isnan(values).any():
        raise ValueError("The scores hold NaN; give NaN-free scores.")
    if seen is not None:
        live = ~np.asarray(seen[rows, cols]).ravel()
        rows, cols, values = rows[live], cols[live], values[live]
    order = np.lexsort((rank_of_item[cols], -values, rows))
    return _first_k(rows[order], cols[order], k)


def _first_k(rows: np.ndarray, cols: np.ndarray, k: int):
    """The first k cells of each row of cells sorted by row."""
    if rows.shape[0] == 0:
        return rows, cols
    starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
    lengths = np.diff(np.append(starts, rows.shape[0]))
    position = np.arange(rows.shape[0]) - np.repeat(starts, lengths)
    cut = position < k
    return rows[cut], cols[cut]


def _frame(users, items, scores, output: str, user_col: str, item_col: str,
           score_col: str):
    data = {user_col: users, item_col: items, score_col: scores}
    if output == "polars":
        import polars as pl

        return pl.DataFrame(data)
    if output == "arrow":
        import pyarrow as pa

        return pa.table(data)
    import pandas as pd

    return pd.DataFrame(data)


def _blocks(scores, n_users: int, items: np.ndarray, users: np.ndarray, batch: int,
            pair_features):
    """Yield ``(start, block)``: the scores of users start..start+batch."""
    from scipy import sparse

    for start in range(0, n_users, batch):
        stop = min(start + batch, n_users)
        if hasattr(scores, "predict"):
            X = pair_features(users[start:stop], items)
            block = np.asarray(scores.predict(X), dtype=np.float64)
            if block.shape != ((stop - start) * items.shape[0],):
                raise ValueError(
                    f"estimator.predict(pair_features(users, items)) gave {block.shape} "
                    f"scores for {stop - start} users x {items.shape[0]} items; "
                    "pair_features must give one row per (user, item) pair, user by user.")
            block = block.reshape(stop - start, items.shape[0])
        elif callable(scores):
            block = scores(np.arange(start, stop))
            if not sparse.issparse(block):
                block = np.asarray(block, dtype=np.float64)
            if block.shape != (stop - start, items.shape[0]):
                raise ValueError(f"scores(user_rows) gave a block of shape {block.shape} for "
                                 f"{stop - start} users and {items.shape[0]} items.")
        else:
            block = scores[start:stop]
            if not sparse.issparse(block):
                block = np.asarray(block, dtype=np.float64)
        yield start, block


def _source(scores, users, items, n_users, pair_features):
    """``(scores, number of users, item ids)``: a matrix as float64 (or CSR),
    or a function or an estimator with what it needs checked."""
    from scipy import sparse

    if callable(scores) or hasattr(scores, "predict"):
        if items is None:
            raise ValueError("A scoring function or an estimator needs items= (the item ids "
                             "it scores, in column order).")
        if hasattr(scores, "predict") and pair_features is None:
            raise ValueError("An estimator needs pair_features=: a function (user_ids, "
                             "item_ids) -> X with one row per (user, item) pair.")
        if users is None and n_users is None:
            raise ValueError("A scoring function or an estimator needs users= or n_users=.")
        count = len(users) if users is not None else int(n_users)
        return scores, count, _ids(items, len(items), "items")
    if sparse.issparse(scores):
        scores = sparse.csr_matrix(scores)
    else:
        scores = np.asarray(scores)
        if scores.ndim != 2:
            raise ValueError(f"scores must be 2-D (users x items); got shape {scores.shape}.")
        if scores.dtype.kind in "iu" and scores.size and (
                int(scores.max()) > 2**53 or int(scores.min()) < -2**53):
            raise ValueError("scores holds integers beyond 2**53, which float64 would round "
                             "into ties; rank them first (e.g. scipy.stats.rankdata) or pass "
                             "floats.")
        scores = scores.astype(np.float64, copy=False)
    return scores, scores.shape[0], _ids(items, scores.shape[1], "items")


@validate_params({
    "scores": ["array-like", "sparse matrix", callable, HasMethods(("predict",))],
    "k": [Interval(Integral, 1, None, closed="left")],
    "users": ["array-like", None],
    "items": ["array-like", None],
    "exclude": [Frame, "array-like", "sparse matrix", None],
    "n_users": [Interval(Integral, 0, None, closed="left"), None],
    "pair_features": [callable, None],
    "batch_size": [Interval(Integral, 1, None, closed="left"), None],
    "output": [StrOptions({"pandas", "polars", "arrow"})],
    "user_col": [str],
    "item_col": [str],
    "score_col": [str],
})
def top_k(scores, *, k=10, users=None, items=None, exclude=None, n_users=None,
          pair_features=None, batch_size=None, output="pandas", user_col="user",
          item_col="item", score_col="score"):
    """The k best items of every user, as the recommendations frame.

    Parameters
    ----------
    scores : array-like or sparse matrix of shape (n_users, n_items), callable or estimator
        A dense score matrix (every item a candidate), a sparse one (its
        stored entries are the candidates), a function ``scores(user_rows)``
        that returns the dense or sparse block of scores of those users (row
        positions, an int array) over every item, or an estimator whose
        ``predict`` scores the rows ``pair_features(user_ids, item_ids)``
        builds: one row per (user, item) pair, user by user (every item of the
        first user, then of the next).
    k : int, default=10
        The length of each list.
    users, items : array-like, default=None
        The ids of the rows and columns (None: 0..n-1). With a callable or an
        estimator, ``items`` is required unless ``n_items`` can be read.
    exclude : DataFrame or sparse matrix, default=None
        Seen interactions to remove before the cut: a frame of (user, item)
        rows (``user_col``, ``item_col``; rows of unknown users or items are
        ignored), or a users x items matrix whose nonzero cells are seen.
    n_users : int, default=None
        The number of users of a callable or an estimator (None: ``len(users)``).
    pair_features : callable, default=None
        For an estimator: ``pair_features(user_ids, item_ids) -> X``.
    batch_size : int, default=None
        Users scored at once; None: about 8M scores at a time.
    output : {"pandas", "polars", "arrow"}, default="pandas"
        The frame library of the result.
    user_col, item_col, score_col : str
        Column names of the result (and of ``exclude``).

    Returns
    -------
    DataFrame or pyarrow.Table
        Columns (user, item, score): each user's items in rank order
        (decreasing score, ties by increasing item id), at most k per user.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.recsys import top_k
    >>> scores = np.array([[0.1, 0.9, 0.5], [0.3, 0.3, 0.2]])
    >>> top_k(scores, k=2, items=["a", "b", "c"])
       user item  score
    0     0    b    0.9
    1     0    c    0.5
    2     1    a    0.3
    3     1    b    0.3
    """
    from scipy import sparse

    scores, count, items = _source(scores, users, items, n_users, pair_features)
    users = _ids(users, count, "users")
    seen = _seen_matrix(exclude, users, items, user_col, item_col)
    rank_of_item = np.empty(items.shape[0], dtype=np.int64)
    rank_of_item[np.argsort(items, kind="stable")] = np.arange(items.shape[0])
    batch = batch_size or max(1, _CELLS // max(1, items.shape[0]))
    parts_u, parts_i, parts_s = [], [], []
    for start, block in _blocks(scores, count, items, users, batch, pair_features):
        chunk_seen = None if seen is None else seen[start:start + block.shape[0]]
        if sparse.issparse(block):
            block = sparse.csr_matrix(block)
            rows, cols = _sparse_top(block, chunk_seen, rank_of_item, k)
            values = np.asarray(block[rows, cols]).ravel()
        else:
            rows, cols = _dense_top(block, chunk_seen, rank_of_item, k)
            values = block[rows, cols]
        parts_u.append(users[start + rows])
        parts_i.append(items[cols])
        parts_s.append(values.astype(np.float64))

    def joined(parts, dtype):
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    return _frame(joined(parts_u, users.dtype), joined(parts_i, items.dtype),
                  joined(parts_s, np.float64), output, user_col, item_col, score_col)
