"""Cross-validation splitters that keep every query whole."""

from __future__ import annotations

import heapq
from numbers import Integral

import numpy as np
from sklearn.model_selection import BaseCrossValidator
from sklearn.utils import check_random_state

from .._utils.compat import Interval, RealNotInt, validate_parameter_constraints
from .._utils.queries import QID_COLUMN, has_qid_column, length_hint, missing_qid_error
from ..metrics._engine.ids import query_codes

__all__ = ["QueryKFold", "QueryShuffleSplit"]


def _codes(splitter, X, groups, qid) -> np.ndarray:
    """Query code of every row, from ``qid``, ``groups`` or X's qid column."""
    if qid is not None and groups is not None:
        raise ValueError(
            f"{type(splitter).__name__}.split got both qid and groups; pass one of them "
            "(they mean the same thing here)."
        )
    ids = qid if qid is not None else groups
    if ids is None and has_qid_column(X):
        ids = X[QID_COLUMN]  # the column itself: NumPy would pad polars strings
    if ids is None:
        raise missing_qid_error(f"{type(splitter).__name__}.split", splitter=True)
    name = "groups" if qid is None and groups is not None else "qid"
    # Validated as given (a list is not handed to NumPy, which would merge
    # 1 and "1" or b"a" and "a"): see metrics._qid.
    codes = query_codes(ids, name).codes
    n_rows = None if X is None else _n_rows(X)
    if n_rows is not None and codes.shape[0] != n_rows:
        raise ValueError(
            f"{type(splitter).__name__}.split: X has {n_rows} rows but {name} has "
            f"{codes.shape[0]} values; pass one query id per row."
            + length_hint(codes.shape[0], n_rows)
        )
    return codes


def _n_rows(X) -> int:
    shape = getattr(X, "shape", None)
    return shape[0] if shape is not None else len(X)


def _prefix(size, sizes_in_order: np.ndarray, total: int) -> int:
    """Number of queries, from the front, that make ``size``.

    An int is a number of queries; a float the shortest prefix holding at least
    that fraction of all ``total`` rows.
    """
    if isinstance(size, Integral):
        return int(size)
    cumulative = np.cumsum(sizes_in_order)
    return int(np.searchsorted(cumulative, size * total - 1e-9) + 1)


def _check_enough_queries(splitter, n_queries: int, needed: int) -> None:
    if n_queries < needed:
        raise ValueError(
            f"{type(splitter).__name__} needs at least {needed} queries for "
            f"n_splits={splitter.n_splits}, but the data has {n_queries}; lower n_splits "
            "or add queries."
        )


class _QuerySplitter(BaseCrossValidator):
    """Shared plumbing: where query ids come from, requests, ``get_n_splits``,
    parameter validation."""

    __metadata_request__split = {"qid": True, "groups": True}
    _parameter_constraints: dict = {}

    def _check_parameters(self) -> None:
        """Refuse a parameter that meets none of its ``_parameter_constraints``
        (scikit-learn words the error). Splitters check their parameters when
        they are made, as scikit-learn's do."""
        validate_parameter_constraints(
            self._parameter_constraints,
            {name: getattr(self, name) for name in self._parameter_constraints},
            caller_name=type(self).__name__)

    def get_n_splits(self, X=None, y=None, groups=None, qid=None) -> int:
        """Number of splits (``n_splits``); the query ids are read by ``split``."""
        return self.n_splits

    def split(self, X=None, y=None, groups=None, qid=None):
        """Yield ``(train, test)`` row indices, ascending, queries kept whole.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_rows, n_features), default=None
            Used for its length and, when a DataFrame, its ``qid`` column.
        y : object
            Ignored.
        groups, qid : array-like of shape (n_rows,), default=None
            Query id of each row; pass one of them. A set, dict or dict view
            is refused: it has no row order.

        Yields
        ------
        train, test : ndarray
            Row indices of the training and test sets of the split.
        """
        codes = _codes(self, X, groups, qid)
        for is_train, is_test in self._query_splits(np.bincount(codes)):
            yield np.flatnonzero(is_train[codes]), np.flatnonzero(is_test[codes])


class QueryKFold(_QuerySplitter):
    """K-fold cross-validation that keeps every query whole, folds balanced by rows.

    Each query (all rows sharing a query id) goes to exactly one test fold, so
    no query is split between training and test data. Queries are assigned to
    the fold with the fewest rows so far, largest query first (or in random
    order with ``shuffle=True``), which balances folds by number of rows, not
    only by number of queries.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds, at least 2.
    shuffle : bool, default=False
        Assign queries to folds in a random order instead of by decreasing size.
    random_state : int, RandomState instance or None, default=None
        Controls the order when ``shuffle=True``.

    See Also
    --------
    QueryShuffleSplit : Random query-keeping train/test splits.
    sklearn.model_selection.GroupKFold : The same idea, groups balanced by count.

    Notes
    -----
    The query ids come from ``split(X, y, qid=...)`` (requested by default
    under metadata routing), from ``groups`` (what scikit-learn passes
    without routing, e.g. ``GridSearchCV(...).fit(X, y, groups=qid)``), or
    from a column named ``qid`` when ``X`` is a DataFrame. Indices are yielded
    in ascending order.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.model_selection import QueryKFold
    >>> qid = np.array([1, 1, 1, 2, 2, 3, 3, 3, 3, 4])
    >>> for train, test in QueryKFold(n_splits=2).split(qid=qid):
    ...     print(test, np.unique(qid[test]))
    [5 6 7 8 9] [3 4]
    [0 1 2 3 4] [1 2]
    """

    _parameter_constraints: dict = {
        "n_splits": [Interval(Integral, 2, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_splits=5, *, shuffle=False, random_state=None):
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state
        self._check_parameters()
        if not shuffle and random_state is not None:
            raise ValueError(
                "Setting random_state has no effect since shuffle is False; set "
                "shuffle=True or leave random_state=None."
            )

    def _query_splits(self, sizes):
        """(train, test) masks over queries, given the rows of each query."""
        _check_enough_queries(self, sizes.shape[0], self.n_splits)
        if self.shuffle:
            order = check_random_state(self.random_state).permutation(sizes.shape[0])
        else:
            order = np.argsort(-sizes, kind="stable")
        fold_of_query = np.empty(sizes.shape[0], dtype=np.intp)
        heap = [(0, f) for f in range(self.n_splits)]  # (rows, fold): lightest first
        for q in order.tolist():
            rows, fold = heapq.heappop(heap)
            fold_of_query[q] = fold
            heapq.heappush(heap, (rows + int(sizes[q]), fold))
        for fold in range(self.n_splits):
            test = fold_of_query == fold
            yield ~test, test


class QueryShuffleSplit(_QuerySplitter):
    """Random train/test splits that keep every query whole.

    Parameters
    ----------
    n_splits : int, default=10
        Number of re-shuffling and splitting iterations.
    test_size : float or int, default=None
        A float in (0, 1) is the fraction of rows in the test set (reached with
        whole queries, as closely as possible); an int is a number of queries.
        None means 0.2, or the complement of ``train_size`` when it is set.
    train_size : float or int, default=None
        The same for the training set; None means the complement of
        ``test_size``.
    random_state : int, RandomState instance or None, default=None
        Controls the randomness.

    See Also
    --------
    QueryKFold : K-fold cross-validation keeping queries whole.

    Notes
    -----
    Query ids come from ``split(X, y, qid=...)``, ``groups`` or a ``qid``
    DataFrame column, as for :class:`QueryKFold`. Each split takes the queries
    in a fresh random order; the test set is the shortest prefix of that order
    holding at least the requested rows (or queries), the training set the next
    queries. Indices are yielded in ascending order.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.model_selection import QueryShuffleSplit
    >>> qid = np.repeat(np.arange(10), 3)
    >>> cv = QueryShuffleSplit(n_splits=2, test_size=0.2, random_state=0)
    >>> [len(np.unique(qid[test])) for _, test in cv.split(qid=qid)]
    [2, 2]
    """

    _parameter_constraints: dict = {
        "n_splits": [Interval(Integral, 1, None, closed="left")],
        # a fraction of rows, or a number of queries
        "test_size": [Interval(RealNotInt, 0, 1, closed="neither"),
                      Interval(Integral, 1, None, closed="left"), None],
        "train_size": [Interval(RealNotInt, 0, 1, closed="neither"),
                       Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(self, n_splits=10, *, test_size=None, train_size=None, random_state=None):
        self.n_splits = n_splits
        self.test_size = test_size
        self.train_size = train_size
        self.random_state = random_state
        self._check_parameters()
        if (isinstance(test_size, float) and isinstance(train_size, float)
                and test_size + train_size > 1):
            raise ValueError(
                f"test_size + train_size = {test_size + train_size} exceeds 1.")

    def _query_splits(self, sizes):
        """(train, test) masks over queries, given the rows of each query."""
        m, total = sizes.shape[0], int(sizes.sum())
        _check_enough_queries(self, m, 2)
        rng = check_random_state(self.random_state)
        test_size = 0.2 if self.test_size is None and self.train_size is None else self.test_size
        for _ in range(self.n_splits):
            order = rng.permutation(m)
            in_order = sizes[order]
            if test_size is not None:
                n_test = _prefix(test_size, in_order, total)
                n_train = (m - n_test if self.train_size is None
                           else _prefix(self.train_size, in_order[n_test:], total))
            else:
                n_train = _prefix(self.train_size, in_order, total)
                n_test = m - n_train
                order = np.roll(order, -n_train)  # the test queries first
            if n_test < 1 or n_train < 1 or n_test + n_train > m:
                raise ValueError(
                    f"QueryShuffleSplit: with {m} queries, test_size={self.test_size!r} "
                    f"and train_size={self.train_size!r} leave an empty train or test set."
                )
            is_test = np.zeros(m, dtype=bool)
            is_test[order[:n_test]] = True
            is_train = np.zeros(m, dtype=bool)
            is_train[order[n_test:n_test + n_train]] = True
            yield is_train, is_test
