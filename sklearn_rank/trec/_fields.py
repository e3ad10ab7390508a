"""The NumPy reader of TREC files: whitespace-separated fields as byte spans,
their numbers (:mod:`~sklearn_rank.trec._numbers`), and every error message with its file and
line."""

from __future__ import annotations

import numpy as np

from ._column import IdColumn
from ._numbers import FastValues, for_blocks, parse_numbers


def _without_comments(text: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``text`` without its comment lines (those starting with ``#`` after
    blanks), and the file's line number of each line kept (None: no line was
    dropped, line i is line i + 1)."""
    if not (text == 35).any():  # '#': comment lines are rare
        return text, None
    lines = text.tobytes().split(b"\n")
    keep = [i for i, line in enumerate(lines) if not line.lstrip().startswith(b"#")]
    return (np.frombuffer(b"\n".join(lines[i] for i in keep), dtype=np.uint8),
            np.asarray(keep) + 1)


def _tokens(text: np.ndarray, seps: np.ndarray, is_newline: np.ndarray):
    """Starts, ends and line (0-based, of ``text``) of the non-empty tokens
    between the separators ``seps`` (``is_newline``: which are newlines)."""
    starts = np.empty(seps.shape[0] + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = seps + 1
    ends = np.empty_like(starts)
    ends[:-1] = seps
    ends[-1] = text.shape[0]
    newline = np.zeros(starts.shape[0], dtype=bool)
    newline[1:] = is_newline
    line = np.cumsum(newline)
    token = ends > starts  # False between two separators in a row
    if not token[:-1].all():
        return starts[token], ends[token], line[token]
    if not token[-1]:  # only the end of the data after its last newline
        return starts[:-1], ends[:-1], line[:-1]
    return starts, ends, line


_BLOCK = 1 << 18  # bytes scanned at a time by _plain_separators (stays in cache)


def _plain_separators(text: np.ndarray, n_fields: int) -> np.ndarray | None:
    """The positions of the separators of a file in the usual layout, or None.

    The usual layout: no ``#`` anywhere, whitespace only spaces, tabs and
    newlines, every line ``n_fields`` non-empty fields one separator apart
    and ending with a newline (so no blank line, nothing after the last
    newline). Scanned in blocks that stay in cache (on up to
    :func:`~sklearn_rank._utils.threads.thread_limit` threads), positions as int32
    when the text allows (whole-text temporaries of int64 positions cost
    more in memory traffic and page faults than the scan itself).
    """
    size = text.shape[0]
    if size == 0 or text[0] <= 32 or text[-1] != 10:
        return None
    kind = np.int32 if size < 2**31 else np.int64
    starts = range(0, size, _BLOCK)
    counts = [-1] * len(starts)  # separators of each block (-1: not plain)
    newlines = [0] * len(starts)

    def check(i: int):
        part = text[starts[i]:starts[i] + _BLOCK + 1]  # one byte of overlap, for adjacency
        sep = part < 33
        if (sep[1:] & sep[:-1]).any():
            return  # an empty field or a blank line
        if (part == 35).any():
            return  # a comment line, maybe
        own = part[:_BLOCK]
        n_newline, n_space = np.count_nonzero(own == 10), np.count_nonzero(own == 32)
        n_sep = np.count_nonzero(sep[:_BLOCK])
        if n_newline + n_space + np.count_nonzero(own == 9) != n_sep:
            return  # CR, NUL or other control bytes: the careful path says what
        newlines[i], counts[i] = n_newline, n_sep

    for_blocks(check, len(starts))
    total = sum(counts)
    if min(counts) < 0 or total % n_fields or sum(newlines) != total // n_fields:
        return None
    seps = np.empty(total, dtype=kind)  # (written in place: no whole-text temporary)
    first = np.cumsum([0] + counts)

    def find(i: int):
        lo = starts[i]
        at = np.flatnonzero(text[lo:lo + _BLOCK] < 33)
        np.add(at, lo, out=seps[first[i]:first[i + 1]], casting="unsafe")

    for_blocks(find, len(starts))
    seps = seps.reshape(-1, n_fields)
    if not (text[seps[:, -1]] == 10).all():
        return None  # (every line's last separator a newline, none elsewhere)
    return seps


class ParsedFields:
    """What both readers give: the fields of every line, as :class:`IdColumn`."""

    name: str
    _lines: np.ndarray | None = None  # each row's line in the file (None: row i is line i + 1)

    def line(self, i: int) -> int:
        """The file's line number of row ``i``."""
        return i + 1 if self._lines is None else int(self._lines[i])

    def release(self):
        """Let the text and the separators go (columns already made keep
        what they point into); :meth:`line` still answers."""

    def n_fields_at(self, i: int) -> int | None:
        """The number of fields of row ``i``'s line when it has more than the
        layout names (and ignores), else None."""
        return None

    def __len__(self) -> int:
        raise NotImplementedError

    def column(self, j: int) -> IdColumn:
        raise NotImplementedError

    def numbers(self, j: int, what: str, integer: bool = False) -> np.ndarray:
        raise NotImplementedError

    def ids_and_numbers(self, ids: tuple[int, ...], j: int, what: str,
                        integer: bool = False) -> tuple[list[IdColumn], np.ndarray]:
        """The fields ``ids`` in buffers of their own (:meth:`IdColumn.compacted`:
        the file's bytes can then be freed), and :meth:`numbers` of field j."""
        return [self.column(k).compacted() for k in ids], self.numbers(j, what, integer)


class Fields(ParsedFields):
    """Whitespace-separated fields of a text buffer, as byte spans (vectorised).

    Fields are separated by C's whitespace (space, tab, newline, CR, vertical
    tab, form feed), as in trec_eval; other control bytes belong to their
    field, and a NUL byte is an error. Blank lines and lines starting with
    ``#`` are skipped; every other line must have exactly ``n_fields`` fields
    (with ``extra``, at least ``n_fields``: the rest of the line is ignored,
    as trec_eval does on run lines).
    """

    _wide: np.ndarray | None = None  # each row's number of fields, when some have more

    def __init__(self, buf: np.ndarray, name: str, n_fields: int, what: str, *,
                 extra: bool = False):
        self.name, self._n_fields = name, n_fields
        self._seps = _plain_separators(buf, n_fields)
        if self._seps is not None:  # the usual file, scanned once in blocks
            self.buf, self._lines = buf, None
            return
        self.buf, numbers = _without_comments(buf)
        seps, is_newline = self._separators(self.buf, numbers)
        if numbers is None and self._regular(self.buf, seps, is_newline, n_fields):
            return
        starts, ends, line = _tokens(self.buf, seps, is_newline)
        counts = np.bincount(line)
        data_lines = np.flatnonzero(counts)
        if numbers is None:
            numbers = np.arange(counts.shape[0]) + 1
        bad = counts[data_lines] < n_fields if extra else counts[data_lines] != n_fields
        if bad.any():
            first = data_lines[np.argmax(bad)]
            raise ValueError(
                f"{name}: line {int(numbers[first])}: expected {n_fields} fields ({what}), "
                f"got {int(counts[first])}."
            )
        if extra and (counts[data_lines] > n_fields).any():  # the first n_fields of a line
            self._wide = counts[data_lines]
            first_token = np.cumsum(counts) - counts
            keep = np.arange(starts.shape[0]) - first_token[line] < n_fields
            starts, ends = starts[keep], ends[keep]
        self._lines = numbers[data_lines]
        self.starts = starts.reshape(-1, n_fields)
        self.ends = ends.reshape(-1, n_fields)

    def _separators(self, text: np.ndarray, numbers) -> tuple[np.ndarray, np.ndarray]:
        """Positions of the whitespace bytes (C's ``isspace``) of ``text``, and
        which of them are newlines."""
        seps = np.flatnonzero(text <= 32)
        kind = text[seps]
        is_newline = kind == 10
        if (np.count_nonzero(is_newline) + np.count_nonzero(kind == 32)
                + np.count_nonzero(kind == 9)) == kind.shape[0]:
            return seps, is_newline  # spaces, tabs and newlines only: the usual text
        odd = (kind < 9) | ((kind > 13) & (kind < 32))  # control bytes: part of a field
        if odd.any():
            nul = seps[odd][kind[odd] == 0]
            if nul.shape[0]:
                line = np.count_nonzero(text[:nul[0]] == 10)
                raise ValueError(
                    f"{self.name}: line {int(numbers[line]) if numbers is not None else line + 1}"
                    ": a NUL byte, which a text file does not hold (is it UTF-16, or binary?)."
                )
            seps, kind = seps[~odd], kind[~odd]
        cr = seps[kind == 13]
        cr = cr[cr + 1 < text.shape[0]]
        lone = cr[text[cr + 1] > 32]  # a field right after a CR: two lines, or one?
        if lone.shape[0]:  # (trec_eval would read on, as if they were one)
            line = np.count_nonzero(text[:lone[0]] == 10)
            raise ValueError(
                f"{self.name}: line {int(numbers[line]) if numbers is not None else line + 1}: "
                "a carriage return inside the line (old Mac line ends?); end lines with LF "
                "or CRLF."
            )
        return seps, kind == 10

    def _regular(self, text: np.ndarray, seps: np.ndarray, is_newline: np.ndarray,
                 n_fields: int) -> bool:
        """The common layout, checked in O(n): every line has ``n_fields``
        fields, one separator apart, and ends with a newline (no blank line)."""
        n = seps.shape[0]
        if n == 0 or n % n_fields or seps[0] == 0 or text[-1] != 10:
            return False
        ends = seps.reshape(-1, n_fields)
        if (np.count_nonzero(text[ends[:, -1]] == 10) != ends.shape[0]
                or np.count_nonzero(is_newline) != ends.shape[0]
                or np.diff(seps).min(initial=2) < 2):
            return False
        starts = np.empty_like(seps)
        starts[0] = 0
        starts[1:] = seps[:-1] + 1
        self.starts, self.ends, self._lines = starts.reshape(-1, n_fields), ends, None
        return True

    def release(self):
        self.buf = self._seps = self.starts = self.ends = None

    def n_fields_at(self, i: int) -> int | None:
        n = None if self._wide is None else int(self._wide[i])
        return n if n is not None and n > self._n_fields else None

    def __len__(self) -> int:
        return (self.starts if self._seps is None else self._seps).shape[0]

    def column(self, j: int) -> IdColumn:
        """Field j of every line."""
        if self._seps is None:
            start = self.starts[:, j]
            return IdColumn(self.buf, start, self.ends[:, j] - start)
        seps = self._seps  # field j ends at separator j of its line
        if j:
            start = seps[:, j - 1] + 1
        else:
            start = np.empty_like(seps[:, 0])
            start[0] = 0
            np.add(seps[:-1, -1], 1, out=start[1:])
        return IdColumn(self.buf, start, seps[:, j] - start)

    def last(self, j: int) -> bytes:
        """Field j of the last line."""
        if self._seps is None:
            start, end = int(self.starts[-1, j]), int(self.ends[-1, j])
        else:  # (field j ends at separator j of its line; see column)
            end = int(self._seps[-1, j])
            start = int(self._seps[-1, j - 1]) + 1 if j else (
                int(self._seps[-2, -1]) + 1 if len(self) > 1 else 0)
        return self.buf[start:end].tobytes()

    def numbers(self, j: int, what: str, integer: bool = False) -> np.ndarray:
        return parse_numbers(self.column(j), self.name, self.line, what, integer)

    def ids_and_numbers(self, ids: tuple[int, ...], j: int, what: str,
                        integer: bool = False) -> tuple[list[IdColumn], np.ndarray]:
        """As :meth:`ParsedFields.ids_and_numbers`, as one list of tasks on up to
        :func:`~sklearn_rank._utils.threads.thread_limit` threads: the copy of each
        id field (a few large copies, which release the GIL) and the blocks
        of :class:`FastValues`: one list, so that a thread done with its
        copies goes on with the numbers instead of waiting."""
        column = self.column(j)
        reader = FastValues(column)
        copies = [None] * len(ids)

        def task(i: int):
            if i < len(ids):
                copies[i] = self.column(ids[i]).compacted()
            else:
                reader.read(i - len(ids))

        for_blocks(task, len(ids) + reader.n_blocks)
        return copies, parse_numbers(column, self.name, self.line, what, integer, reader)
