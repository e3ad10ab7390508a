"""Read SVMlight / LETOR ranking files and LightGBM files with a ``.query`` file."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import zlib
from array import array
from numbers import Integral

import numpy as np

from ..metrics._grouping import runs_of as _runs_of

__all__ = ["load_svmlight_ranking"]

#: Compression detected by magic bytes, whatever the file's extension.
_MAGIC = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))

#: What truncated or corrupt gzip, bzip2 or xz data raises while it is read.
_DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)

_INTEGER = re.compile(rb"[+-]?[0-9]+")


class _LineError(Exception):
    """A malformed line: its 1-based number and the reason."""

    def __init__(self, lineno: int, reason: str):
        super().__init__(lineno, reason)
        self.lineno, self.reason = lineno, reason


def _open(path: str):
    """Open a file for binary reading, decompressing gzip, bzip2 or xz content."""
    with open(path, "rb") as f:
        head = f.read(6)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            return opener(path, "rb")
    return open(path, "rb")


def _compressed(f) -> bool:
    return isinstance(f, gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile)


def _broken(path: str, f, lineno: int, err: Exception) -> ValueError:
    """A one-line error for compressed data that ends early or is corrupt."""
    kind = {gzip.GzipFile: "gzip", bz2.BZ2File: "bzip2", lzma.LZMAFile: "xz"}[type(f)]
    where = f"after line {lineno}" if lineno else "before the first line"
    reason = str(err) or type(err).__name__
    return ValueError(f"{path}: the {kind} data is truncated or corrupt {where} ({reason}); "
                      "decompress it again or fetch a fresh copy.")


def _show(token: bytes) -> str:
    """A token as it reads in a message, shortened."""
    text = token.decode("utf-8", "backslashreplace")
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _strip_comment(line: bytes) -> bytes:
    hash_at = line.find(b"#")
    return line if hash_at < 0 else line[:hash_at]


class _Lines:
    """The lines of a file, for :func:`sklearn.datasets.load_svmlight_file`.

    While the loader reads, record each data line's number and ``qid:`` value
    and check that every data line has a qid or none has (the loader ignores
    qids when ``query_id=False`` and, with ``query_id=True``, appends them to a
    NumPy array one at a time, which is quadratic in the number of rows). The
    last line handed out is the one the loader was reading if it fails.
    """

    def __init__(self, f):
        self._f = f
        self.lineno = 0
        self.line = b""
        self.rows = array("q")  # line number of each data line
        self.qids = array("q")
        self.has_qid = None  # decided by the first data line

    def read(self, *args):  # load_svmlight_file wants a file-like object
        return self._f.read(*args)

    def __iter__(self):
        rows, qids = self.rows, self.qids
        for lineno, line in enumerate(self._f, 1):
            self.lineno, self.line = lineno, line
            head = _strip_comment(line).split(None, 2)
            if head:
                rows.append(lineno)
                token = head[1] if len(head) > 1 else b""
                # What the loader takes for a qid (and then skips).
                has_qid = token.startswith(b"qid")
                if has_qid is not self.has_qid:
                    if self.has_qid is not None:
                        raise _LineError(lineno, _qid_mismatch(has_qid, rows[0]))
                    self.has_qid = has_qid
                if has_qid:
                    qids.append(_parse_qid(token, lineno))
            yield line


def _qid_mismatch(has_qid: bool, first: int) -> str:
    if has_qid:
        return (f"has qid: but line {first} does not; every line needs a qid:, or "
                "none does (then give group sizes in a query file)")
    return f"missing qid: (line {first} has one; every line needs one, or none does)"


def _parse_qid(token: bytes, lineno: int) -> int:
    if not token.startswith(b"qid:"):
        raise _LineError(lineno, f"{_show(token)} is neither qid:<id> nor <index>:<value>")
    if not _INTEGER.fullmatch(token, 4):  # int() would also take "1_000" and spaces
        raise _LineError(lineno, f"qid {_show(token[4:])} is not an integer")
    value = int(token[4:])
    if not -(2**63) <= value < 2**63:
        raise _LineError(lineno, f"qid {value} does not fit in int64")
    return value


def _diagnose(line: bytes) -> str | None:
    """Why a data line is malformed (None if it is fine): the loader's rules."""
    parts = _strip_comment(line).split()
    if not parts:
        return None
    try:
        float(parts[0])
    except ValueError:
        return f"label {_show(parts[0])} is not a number"
    features = parts[1:]
    if features and features[0].startswith(b"qid"):
        features = features[1:]
    prev = 0
    for token in features:
        if token.startswith(b"qid"):
            return f"{_show(token)}: qid: must come right after the label"
        index, colon, value = token.partition(b":")
        if not colon:
            return f"{_show(token)} is not an <index>:<value> pair"
        try:
            idx = int(index)
        except ValueError:
            return f"feature index {_show(index)} is not an integer"
        if idx < 1:
            return (f"feature index {idx} but indices start at 1 (as in SVMlight and "
                    "LETOR files; was this file written zero-based?)")
        if idx >= 2**31:
            return f"feature index {idx} is too large"
        if idx == prev:
            return f"feature index {idx} repeated"
        if idx < prev:
            return f"features not in increasing order (index {idx} after {prev})"
        try:
            float(value)
        except ValueError:
            return f"value {_show(value)} of feature {idx} is not a number"
        prev = idx
    return None


def _check_finite(path: str, X, y: np.ndarray, rows) -> None:
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
            f"{path}: line {rows[value_row]}: value of feature {X.indices[bad_value[0]] + 1} "
            f"is {X.data[bad_value[0]]} (or too large for {X.dtype}); feature values must be "
            "finite (NaN is read as a missing value)")


def _read_sizes(query_path: str) -> np.ndarray:
    """Group sizes of a LightGBM query file: one positive integer per line."""
    sizes = []
    with _open(query_path) as f:
        lineno = 0
        try:
            for lineno, line in enumerate(f, 1):  # noqa: B007 - read by the handler
                text = line.strip()
                if not text:
                    continue
                if not _INTEGER.fullmatch(text):
                    raise ValueError(f"{query_path}: line {lineno}: group size {_show(text)} "
                                     "is not an integer")
                size = int(text)
                if size < 1:
                    raise ValueError(f"{query_path}: line {lineno}: group size {size}; sizes "
                                     "must be >= 1")
                if size >= 2**62:
                    raise ValueError(f"{query_path}: line {lineno}: group size {size} is too "
                                     "large")
                sizes.append(size)
        except _DECOMPRESSION_ERRORS as err:
            if not _compressed(f):
                raise
            raise _broken(query_path, f, lineno, err) from None
    if not sizes:
        raise ValueError(f"{query_path}: no group sizes (the query file is empty).")
    return np.array(sizes, dtype=np.int64)


def load_svmlight_ranking(
    path: str | os.PathLike,
    query_path: str | os.PathLike | None = None,
    *,
    n_features: int | None = None,
    dtype=np.float64,
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

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
        The features; feature index j of the file is column j - 1. As with
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
        is not ``<index>:<value>`` pairs, a feature index below 1 or above
        ``n_features``, indices not increasing along a line, some lines with
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
        (with ``query_id=qid, zero_based=False``).
    make_ranking : Synthetic data of the same shape.

    Notes
    -----
    A file with both ``qid:`` fields and a query file (given or found) is
    accepted only if they agree: the group sizes must equal the lengths of the
    runs of equal consecutive qids. The qids are then those of the file.
    Otherwise it is a ValueError, since one of the two must be wrong.

    Feature indices start at 1, as in SVMlight, LETOR, MSLR and Yahoo! files:
    an index 0 is an error rather than a guess (scikit-learn's
    ``load_svmlight_file`` guesses zero-based indices when it sees a 0).

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
    >>> shutil.rmtree(tmp)
    """
    from sklearn.datasets import load_svmlight_file

    from .._compat import Interval, validate_parameter_constraints

    validate_parameter_constraints(
        {
            "path": [str, os.PathLike],
            "query_path": [str, os.PathLike, None],
            "n_features": [Interval(Integral, 1, None, closed="left"), None],
        },
        dict(path=path, query_path=query_path, n_features=n_features),
        caller_name="load_svmlight_ranking",
    )
    path = os.fspath(path)
    with _open(path) as f:
        lines = _Lines(f)
        try:
            X, y = load_svmlight_file(lines, dtype=dtype, zero_based=False)
        except _LineError as err:
            raise ValueError(f"{path}: line {err.lineno}: {err.reason}") from None
        except (ValueError, OverflowError) as err:
            reason = _diagnose(lines.line) or str(err)
            raise ValueError(f"{path}: line {lines.lineno}: {reason}") from err
        except _DECOMPRESSION_ERRORS as err:
            if not _compressed(f):
                raise
            raise _broken(path, f, lines.lineno, err) from None

    n_rows = X.shape[0]
    if n_rows == 0:
        raise ValueError(f"{path}: no data lines (the file is empty or has only comments).")
    _check_finite(path, X, y, lines.rows)
    if n_features is not None:
        if X.shape[1] > n_features:
            first = np.flatnonzero(X.indices >= n_features)[0]
            row = np.searchsorted(X.indptr, first, side="right") - 1
            raise ValueError(f"{path}: line {lines.rows[row]}: feature index "
                             f"{X.indices[first] + 1} but n_features={n_features}")
        X.resize((n_rows, n_features))

    if query_path is None and os.path.isfile(path + ".query"):
        query_path = path + ".query"
    if query_path is not None:
        query_path = os.fspath(query_path)
        sizes = _read_sizes(query_path)

    if lines.has_qid:
        qid = np.frombuffer(lines.qids, dtype=np.int64)
        if query_path is not None:
            _, runs = _runs_of(qid)
            if runs.shape != sizes.shape or np.any(runs != sizes):
                raise ValueError(
                    f"{path} has qid: fields and a query file {query_path} that disagree: "
                    f"the qids form {runs.shape[0]} runs of consecutive rows, the query file "
                    f"gives {sizes.shape[0]} group sizes"
                    + (f" (first difference: group {np.flatnonzero(runs != sizes)[0] + 1})"
                       if runs.shape == sizes.shape else "")
                    + "; remove or fix one of them.")
        return X, y, qid

    if query_path is None:
        raise ValueError(
            f"{path} has no qid: fields and no query file: pass query_path= (a LightGBM "
            f"query file, one group size per line) or put it at {path + '.query'}.")
    total = sum(sizes.tolist())  # Python integers: no overflow
    if total != n_rows:
        raise ValueError(f"The group sizes in {query_path} sum to {total} but {path} "
                         f"has {n_rows} rows.")
    return X, y, np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
