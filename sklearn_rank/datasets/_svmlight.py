"""Read SVMlight / LETOR ranking files and LightGBM files with a ``.query`` file."""

from __future__ import annotations

import os
from numbers import Integral

import numpy as np

from .._utils.validation import Interval, StrOptions, validate_params
from ._svmlight_lines import (
    DECOMPRESSION_ERRORS,
    LineError,
    Lines,
    broken,
    compressed,
    diagnose,
    open_file,
    read_sizes,
)

__all__ = ["load_svmlight_ranking"]


@validate_params({
    "path": [str, os.PathLike],
    "query_path": [str, os.PathLike, None],
    "n_features": [Interval(Integral, 1, None, closed="left"), None],
    "dtype": "no_validation",  # whatever NumPy takes for a dtype
    "zero_based": ["boolean", StrOptions({"auto"})],
})
def load_svmlight_ranking(
    path: str | os.PathLike,
    query_path: str | os.PathLike | None = None,
    *,
    n_features: int | None = None,
    dtype=np.float64,
    zero_based: bool | str = False,
):
    """Load a ranking dataset in SVMlight / LETOR or LightGBM format.

    Reads the text files of LETOR, MSLR-WEB, Yahoo! LTR and Istella, whose
    lines carry their query id (``<label> qid:<id> <index>:<value> ...``),
    and LightGBM's ranking files, whose lines have no qid and whose queries
    are given as group sizes in a separate query file.

    Parameters
    ----------
    path : str or os.PathLike
        The data file. Lines are ``<label> [qid:<id>] <index>:<value> ...``
        with feature indices starting at 1 and increasing along a line;
        ``#`` starts a comment and blank lines are skipped. Files compressed
        with gzip, bzip2 or xz are read transparently (detected by their magic
        bytes, whatever the extension).
    query_path : str or os.PathLike, default=None
        A LightGBM query file: one group size per line, giving the number of
        consecutive rows of each query. If None and ``path + ".query"`` exists,
        that file is used (LightGBM's own convention).
    n_features : int, default=None
        Number of columns of ``X``. None takes the largest feature index in
        the file; pass it to give files of the same dataset (train and test)
        the same width. A larger index in the file is an error.
    dtype : numpy dtype, default=np.float64
        Data type of ``X``.
    zero_based : bool or "auto", default=False
        Whether the file's feature indices start at 0. False (SVMlight,
        LETOR, MSLR, Yahoo! and Istella files): index j is column j - 1 and
        an index 0 is an error. True (what
        :func:`sklearn.datasets.dump_svmlight_file` writes by default): index
        j is column j. "auto": zero-based if some line has a feature index 0,
        else one-based, as :func:`sklearn.datasets.load_svmlight_file`
        decides; a zero-based file whose column 0 is never written (all
        zeros) is then read one-based, every column shifted by one, so pass
        True or False when you know how the file was written (and the same
        value for the train and test files of a dataset).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        The features; feature index j of the file is column j - 1 (column j
        when the file is read zero-based). As with
        :func:`sklearn.datasets.load_svmlight_file` (which this function
        uses), a ``csr_array`` if scikit-learn is configured for sparse arrays.
        ``X.toarray()`` gives a dense array.
    y : ndarray of shape (n_rows,), dtype float64
        The labels as read (finite numbers).
    qid : ndarray of shape (n_rows,), dtype int64
        The query id of each row: the ``qid:`` values as read (any integer
        that fits int64, negative ones included: an id only groups rows), or
        for a file with a query file the query's position 0, 1, 2, ... in the
        file.

    Raises
    ------
    FileNotFoundError
        If ``path`` or ``query_path`` does not exist.
    ValueError
        For a malformed line, naming the file, the line number (1-based) and
        the reason: a label, qid or value that is not a number, a line that
        is not ``<index>:<value>`` pairs, a feature index below 1 (below 0
        when zero-based) or not below ``n_features`` + 1 (``n_features``
        when zero-based), indices not increasing along a line, some lines with
        ``qid:`` and some without, a label that is NaN or infinite, a feature
        value that is infinite (or overflows ``dtype``). Also if the file has
        no data line, has no qid and no query file, if the query file has no
        size, a size below 1 or sizes that do not add up to the number of
        rows, or if compressed data is truncated or corrupt (naming the last
        line read).

    See Also
    --------
    sklearn.datasets.load_svmlight_file : The loader underneath, without the
        ranking checks.
    sklearn.datasets.dump_svmlight_file : Write a file this function reads
        (with ``query_id=qid``; its default ``zero_based=True`` needs
        ``zero_based=True`` here too).
    make_ranking : Synthetic data of the same shape.

    Notes
    -----
    A file with both ``qid:`` fields and a query file (given or found) is
    accepted only if they agree: the group sizes must equal the lengths of the
    runs of equal consecutive qids. The qids are then those of the file.
    Otherwise it is a ValueError, since one of the two must be wrong.

    Feature indices start at 1 by default, as in SVMlight, LETOR, MSLR and
    Yahoo! files: an index 0 is then an error naming ``zero_based=True``
    rather than a guess (scikit-learn's ``load_svmlight_file`` guesses by
    default, ``zero_based="auto"``).

    A feature value ``nan`` is kept as NaN in ``X``: LightGBM, XGBoost and
    scikit-learn's histogram gradient boosting read it as a missing value.
    An infinite value (``inf``, or a number such as ``1e400`` that overflows)
    is refused, as scikit-learn's and XGBoost's estimators would at fit; a
    NaN or infinite label is refused too, since no metric can use it.

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> from sklearn_rank.datasets import load_svmlight_ranking
    >>> tmp = tempfile.mkdtemp()
    >>> path = os.path.join(tmp, "train.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("2 qid:10 1:0.5 3:1.2 # docid = A\\n"
    ...                 "0 qid:10 2:0.1\\n"
    ...                 "1 qid:11 1:0.3 2:0.9\\n")
    >>> X, y, qid = load_svmlight_ranking(path)
    >>> X.toarray()
    array([[0.5, 0. , 1.2],
           [0. , 0.1, 0. ],
           [0.3, 0.9, 0. ]])
    >>> y, qid
    (array([2., 0., 1.]), array([10, 10, 11]))

    A LightGBM file, with its query file found next to it:

    >>> path = os.path.join(tmp, "rank.train")
    >>> with open(path, "w") as f:
    ...     _ = f.write("2 1:0.5 3:1.2\\n0 2:0.1\\n1 1:0.3 2:0.9\\n")
    >>> with open(path + ".query", "w") as f:
    ...     _ = f.write("2\\n1\\n")
    >>> X, y, qid = load_svmlight_ranking(path, n_features=4)
    >>> X.shape, qid
    ((3, 4), array([0, 0, 1]))

    A file written by scikit-learn, whose feature indices start at 0:

    >>> import numpy as np
    >>> from sklearn.datasets import dump_svmlight_file
    >>> path = os.path.join(tmp, "dumped.txt")
    >>> dump_svmlight_file(np.eye(3), [2, 0, 1], path, query_id=[10, 10, 11])
    >>> X, y, qid = load_svmlight_ranking(path, zero_based=True)
    >>> X.toarray(), qid
    (array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]]), array([10, 10, 11]))
    >>> shutil.rmtree(tmp)
    """
    path = os.fspath(path)
    X, y, lines, base = _load(path, dtype, zero_based)
    if n_features is not None:
        _set_width(path, X, lines.rows, n_features, base)
    if query_path is None and os.path.isfile(path + ".query"):
        query_path = path + ".query"
    query_path = None if query_path is None else os.fspath(query_path)
    sizes = None if query_path is None else read_sizes(query_path)
    qid = _qids(lines)
    if qid is None and sizes is None:
        raise ValueError(
            f"{path} has no qid: fields and no query file: pass query_path= (a LightGBM "
            f"query file, one group size per line) or put it at {path + '.query'}.")
    return X, y, query_ids(path, query_path, qid, sizes, X.shape[0])


def _qids(lines):
    return np.frombuffer(lines.qids, dtype=np.int64) if lines.has_qid else None


def read_rows(path: str, dtype=np.float64, zero_based: bool | str = False):
    """``(X, y, qid)`` of an SVMlight / LETOR file, ``qid`` None when its lines
    have no ``qid:`` (errors as :func:`load_svmlight_ranking`'s)."""
    X, y, lines, _ = _load(path, dtype, zero_based)
    return X, y, _qids(lines)


def query_ids(path: str, query_path: str | None, qid, sizes, n_rows: int) -> np.ndarray:
    """The query id of each row of the data file ``path``: its ``qid`` values
    (which the group ``sizes`` of the query file, when given, must agree with),
    or each query's position in the file, from ``sizes``."""
    if qid is not None:
        if sizes is not None:
            _check_agree(path, query_path, qid, sizes)
        return qid
    total = sum(sizes.tolist())  # Python integers: no overflow
    if total != n_rows:
        raise ValueError(f"The group sizes in {query_path} sum to {total} but "
                         f"{path} has {n_rows} rows.")
    return np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)


def _load(path: str, dtype, zero_based: bool | str):
    """``(X, y, lines, base)`` of a data file, each error naming its line;
    ``base`` is the file's index of column 0 (0 or 1)."""
    from sklearn.datasets import load_svmlight_file

    with open_file(path) as f:
        lines = Lines(f)
        try:
            # "auto" reads the indices as written, then decides (below)
            X, y = load_svmlight_file(lines, dtype=dtype, zero_based=zero_based is not False)
        except LineError as err:
            raise ValueError(f"{path}: line {err.lineno}: {err.reason}") from None
        except (ValueError, OverflowError) as err:
            reason = diagnose(lines.line, first_index=0 if zero_based else 1) or str(err)
            raise ValueError(f"{path}: line {lines.lineno}: {reason}") from err
        except DECOMPRESSION_ERRORS as err:
            if not compressed(f):
                raise
            raise broken(path, f, lines.lineno, err) from None
    if X.shape[0] == 0:
        raise ValueError(f"{path}: no data lines (the file is empty or has only comments).")
    base = 0 if zero_based is True else 1
    if zero_based == "auto":
        if X.nnz == 0 or X.indices.min() == 0:
            base = 0
        else:  # one-based after all: index j is column j - 1, as scikit-learn's "auto"
            X = type(X)((X.data, X.indices - 1, X.indptr),
                        shape=(X.shape[0], max(X.shape[1] - 1, 1)))
    _check_finite(path, X, y, lines.rows, base)
    return X, y, lines, base


def _check_finite(path: str, X, y: np.ndarray, rows, base: int) -> None:
    """Refuse NaN or infinite labels and infinite feature values, at the
    first line that has one; NaN feature values are missing values."""
    bad_label = np.flatnonzero(~np.isfinite(y))
    bad_value = np.flatnonzero(np.isinf(X.data))
    label_row = bad_label[0] if bad_label.size else None
    value_row = (np.searchsorted(X.indptr, bad_value[0], side="right") - 1
                 if bad_value.size else None)
    if label_row is not None and (value_row is None or label_row <= value_row):
        raise ValueError(f"{path}: line {rows[label_row]}: label {y[label_row]} is not a "
                         "finite number (a relevance grade is needed for every row)")
    if value_row is not None:
        raise ValueError(
            f"{path}: line {rows[value_row]}: value of feature {X.indices[bad_value[0]] + base} "
            f"is {X.data[bad_value[0]]} (or too large for {X.dtype}); feature values must be "
            "finite (NaN is read as a missing value)")


def _set_width(path: str, X, rows, n_features: int, base: int) -> None:
    """Give X ``n_features`` columns; refuse a larger feature index in the file."""
    if X.shape[1] > n_features:
        first = np.flatnonzero(X.indices >= n_features)[0]
        row = np.searchsorted(X.indptr, first, side="right") - 1
        raise ValueError(f"{path}: line {rows[row]}: feature index "
                         f"{X.indices[first] + base} but n_features={n_features}"
                         + (" (indices 0 to n_features - 1 when zero_based)" if base == 0
                            else ""))
    X.resize((X.shape[0], n_features))


def _check_agree(path: str, query_path: str, qid: np.ndarray, sizes: np.ndarray) -> None:
    """Refuse a query file whose group sizes are not the runs of equal consecutive qids."""
    runs = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    if runs.shape != sizes.shape or np.any(runs != sizes):
        raise ValueError(
            f"{path} has qid: fields and a query file {query_path} that disagree: "
            f"the qids form {runs.shape[0]} runs of consecutive rows, the query file "
            f"gives {sizes.shape[0]} group sizes"
            + (f" (first difference: group {np.flatnonzero(runs != sizes)[0] + 1})"
               if runs.shape == sizes.shape else "")
            + "; remove or fix one of them.")
