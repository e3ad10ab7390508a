"""The lines of SVMlight / LETOR files and of LightGBM query files.

Opening (gzip, bzip2 and xz detected by their magic bytes), the data lines
as scikit-learn's loader reads them with their numbers and ``qid:`` values,
why a line is malformed, and the group sizes of a query file.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import zlib
from array import array

import numpy as np

__all__ = ["DECOMPRESSION_ERRORS", "LineError", "Lines", "broken", "compressed", "diagnose",
           "open_file", "read_sizes"]

#: Compression detected by magic bytes, whatever the file's extension.
_MAGIC = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))

#: What truncated or corrupt gzip, bzip2 or xz data raises while it is read.
DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)

_INTEGER = re.compile(rb"[+-]?[0-9]+")


class LineError(Exception):
    """A malformed line: its 1-based number and the reason."""

    def __init__(self, lineno: int, reason: str):
        super().__init__(lineno, reason)
        self.lineno, self.reason = lineno, reason


def open_file(path: str):
    """Open a file for binary reading, decompressing gzip, bzip2 or xz content."""
    with open(path, "rb") as f:
        head = f.read(6)
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            return opener(path, "rb")
    return open(path, "rb")


def compressed(f) -> bool:
    return isinstance(f, gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile)


def broken(path: str, f, lineno: int, err: Exception) -> ValueError:
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


class Lines:
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
                        raise LineError(lineno, _qid_mismatch(has_qid, rows[0]))
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
        raise LineError(lineno, f"{_show(token)} is neither qid:<id> nor <index>:<value>")
    if not _INTEGER.fullmatch(token, 4):  # int() would also take "1_000" and spaces
        raise LineError(lineno, f"qid {_show(token[4:])} is not an integer")
    value = int(token[4:])
    if not -(2**63) <= value < 2**63:
        raise LineError(lineno, f"qid {value} does not fit in int64")
    return value


def diagnose(line: bytes, first_index: int = 1) -> str | None:
    """Why a data line is malformed (None if it is fine): the loader's rules,
    feature indices starting at ``first_index`` (1, or 0 for zero-based files)."""
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
    prev = first_index - 1
    for token in features:
        index, reason = _feature(token, prev, first_index)
        if reason is not None:
            return reason
        prev = index
    return None


def _feature(token: bytes, prev: int, first_index: int) -> tuple[int, str | None]:
    """The index of an ``<index>:<value>`` token after index ``prev``, and why the
    token is malformed (None if it is fine)."""
    if token.startswith(b"qid"):
        return 0, f"{_show(token)}: qid: must come right after the label"
    index, colon, value = token.partition(b":")
    if not colon:
        return 0, f"{_show(token)} is not an <index>:<value> pair"
    try:
        idx = int(index)
    except ValueError:
        return 0, f"feature index {_show(index)} is not an integer"
    if idx < first_index == 1:
        return idx, (f"feature index {idx} but indices start at 1 (as in SVMlight and "
                     "LETOR files); if the file was written zero-based (as "
                     "sklearn.datasets.dump_svmlight_file does by default), pass "
                     "zero_based=True")
    if idx < first_index:
        return idx, f"feature index {idx} is negative (zero-based indices start at 0)"
    if idx >= 2**31:
        return idx, f"feature index {idx} is too large"
    if idx <= prev:
        return idx, (f"feature index {idx} repeated" if idx == prev else
                     f"features not in increasing order (index {idx} after {prev})")
    try:
        float(value)
    except ValueError:
        return idx, f"value {_show(value)} of feature {idx} is not a number"
    return idx, None


def read_sizes(query_path: str) -> np.ndarray:
    """Group sizes of a LightGBM query file: one positive integer per line."""
    sizes = []
    with open_file(query_path) as f:
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
        except DECOMPRESSION_ERRORS as err:
            if not compressed(f):
                raise
            raise broken(query_path, f, lineno, err) from None
    if not sizes:
        raise ValueError(f"{query_path}: no group sizes (the query file is empty).")
    return np.array(sizes, dtype=np.int64)
