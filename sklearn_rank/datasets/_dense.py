"""LightGBM's dense text files: one row per line, the label first, then the
features, separated by commas (CSV) or tabs / spaces (TSV), without a header
(LightGBM's default); the queries in a separate query file of group sizes.

Read with NumPy's C parser; when it fails, the file is read again line by line
to name the first bad line and field.
"""

from __future__ import annotations

import numpy as np

from ._svmlight_lines import DECOMPRESSION_ERRORS, broken, compressed, open_file

__all__ = ["data_format", "read_dense"]


def _data_lines(f):
    """``(line number, fields text)`` of the lines that hold data (not blank, not
    only a ``#`` comment)."""
    for lineno, raw in enumerate(f, start=1):
        text = raw.split(b"#", 1)[0].strip()
        if text:
            yield lineno, text


def data_format(path: str) -> str:
    """``"svmlight"`` (``index:value`` pairs, LETOR / LibSVM), ``"csv"`` or ``"tsv"``,
    from the first data line of the file (an empty file is ``"svmlight"``, whose
    reader reports it)."""
    with open_file(path) as f:
        try:
            first = next(_data_lines(f), (0, b""))[1]
        except DECOMPRESSION_ERRORS as err:
            if not compressed(f):
                raise
            raise broken(path, f, 0, err) from None
    if not first or b":" in first:
        return "svmlight"
    return "csv" if b"," in first else "tsv"


def read_dense(path: str, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a dense CSV or TSV file (``fmt``): the first column is the
    label, the others the features. Errors name the file and the line."""
    delimiter = "," if fmt == "csv" else None
    with open_file(path) as f:
        try:
            data = np.loadtxt(f, delimiter=delimiter, ndmin=2, dtype=np.float64,
                              comments="#")
        except ValueError:
            raise ValueError(_diagnose(path, delimiter)) from None
        except DECOMPRESSION_ERRORS as err:
            if not compressed(f):
                raise
            raise broken(path, f, 0, err) from None
    if data.shape[0] == 0:
        raise ValueError(f"{path}: no data lines (the file is empty or has only comments).")
    if data.shape[1] < 2:
        raise ValueError(f"{path}: the lines hold one number, a label and no feature; a "
                         "dense LightGBM file has the label, then the features.")
    _check_finite(path, data)
    return np.ascontiguousarray(data[:, 1:]), data[:, 0].copy()


def _split(text: bytes, delimiter) -> list[bytes]:
    return [t.strip() for t in text.split(delimiter.encode())] if delimiter else text.split()


def _diagnose(path: str, delimiter) -> str:
    """Why NumPy could not read the file: its first bad line."""
    width = None
    with open_file(path) as f:
        for lineno, text in _data_lines(f):
            fields = _split(text, delimiter)
            for j, token in enumerate(fields, start=1):
                try:
                    float(token)
                except ValueError:
                    shown = token.decode("utf-8", "backslashreplace")[:40]
                    what = "empty (write nan for a missing value)" if not token else (
                        f"{shown!r}, not a number")
                    hint = ("; a header line? LightGBM reads files without one: remove it"
                            if width is None else "")
                    return f"{path}: line {lineno}: field {j} is {what}{hint}"
            if width is not None and len(fields) != width:
                return (f"{path}: line {lineno} has {len(fields)} fields, the lines before "
                        f"it {width}; every line holds the label and the same features")
            width = len(fields)
    return f"{path}: not a dense CSV or TSV file of numbers"


def _check_finite(path: str, data: np.ndarray) -> None:
    """Refuse a NaN or infinite label and an infinite feature value (NaN is a
    missing value), naming the line."""
    bad = ~np.isfinite(data[:, 0]) | np.isinf(data[:, 1:]).any(axis=1)
    if not bad.any():
        return
    row = int(np.flatnonzero(bad)[0])
    with open_file(path) as f:
        lineno = next(n for i, (n, _) in enumerate(_data_lines(f)) if i == row)
    if not np.isfinite(data[row, 0]):
        raise ValueError(f"{path}: line {lineno}: label {data[row, 0]} is not a finite number "
                         "(a relevance grade is needed for every row)")
    j = int(np.flatnonzero(np.isinf(data[row, 1:]))[0])
    raise ValueError(f"{path}: line {lineno}: feature {j + 1} is {data[row, j + 1]} (or too "
                     "large for float64); feature values must be finite (nan is read as a "
                     "missing value)")
