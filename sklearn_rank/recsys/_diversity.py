"""Intra-list diversity (:func:`ild`) and the item vectors it compares.

Interface: :func:`ild`, :func:`cooccurrence_features` (Microsoft Recommenders'
item rows: the users who interacted with each item), ``Features`` (item rows,
dense or sparse, with their pairwise similarity: cosine, Jaccard, Hamming) and
``row_dot``, which :mod:`._serendipity` uses for the history-based presets.
"""

from __future__ import annotations

import numpy as np

from .._utils.validation import StrOptions, validate_params
from . import _arrays
from ._arrays import check_codes, chunks, chunks_by_work, distinct_pairs, select_pairs, top_array

__all__ = ["cooccurrence_features", "ild", "row_dot", "Features"]

#: The most products a sparse Gram matrix of item rows may cost to be kept.
_GRAM = 1 << 27


class Features:
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
            norms = np.sqrt(row_dot(matrix, matrix))
            scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
            self.matrix = (sp.diags_array(scale) @ matrix).tocsr() if self.sparse \
                else matrix * scale[:, None]
        elif similarity == "jaccard":
            self.matrix = (matrix != 0).astype(np.float64)
            if self.sparse:
                self.matrix = sp.csr_array(self.matrix)
            self.sizes = row_dot(self.matrix, self.matrix)
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
            return row_dot(self.rows(a), self.rows(b))
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


def row_dot(x, y) -> np.ndarray:
    """Row-wise dot products of two equally shaped dense or sparse matrices."""
    if _is_sparse(x):
        return np.asarray(x.multiply(y).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", x, y)


def _is_sparse(x) -> bool:
    return type(x).__module__.startswith("scipy.sparse")


def _squared_norm_of_sums(features: Features, rows: np.ndarray) -> np.ndarray:
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
    if n_cells <= 4 * _arrays.CHUNK:  # the summed rows fit densely
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
    top = top_array(top)
    features = Features(item_features, similarity)
    check_codes(top, features.n_items, "item_features")
    valid = top >= 0
    n = valid.sum(axis=1).astype(np.float64)
    n_pairs = n * (n - 1) / 2
    total = np.zeros(top.shape[0])
    width = features.matrix.shape[1]
    if similarity == "cosine":
        squares = row_dot(features.matrix, features.matrix)
        codes = np.where(valid, top, 0)
        if features.sparse:
            nnz = np.diff(features.matrix.indptr)
            work = np.where(valid, nnz[codes], 0).sum(axis=1) + top.shape[1]
        else:
            work = np.full(top.shape[0], top.shape[1] * width)
        for rows in chunks_by_work(work):
            self_dot = np.where(valid[rows], squares[codes[rows]], 0.0).sum(axis=1)
            total[rows] = n_pairs[rows] - (_squared_norm_of_sums(features, top[rows])
                                           - self_dot) / 2
    else:
        per_row = top.shape[1] * (top.shape[1] - 1) // 2 * (1 if features.sparse else width)
        for rows in chunks(top.shape[0], per_row):
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
    users, items = distinct_pairs(user_codes, item_codes, n_items)
    n_users = int(users.max()) + 1 if n_users is None and users.size else (n_users or 0)
    return select_pairs(items, users, n_items, n_users)
