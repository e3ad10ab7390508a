"""Qrels and runs from pandas and polars DataFrames.

Two layouts are read, by their column names: PyTerrier's (``qid, docno,
score`` for a run, ``qid, docno, label`` for qrels) and ir_measures'
(``query_id, doc_id, score`` / ``query_id, doc_id, relevance``). Other
columns (PyTerrier's ``rank`` and ``query``, ir_measures' ``iteration``) are
ignored, as trec_eval ignores the rank and iteration fields of its files.

Ids are text, as in a TREC file: string columns are used as they are (no
padding, no stripping); an integer column gives the decimal strings of its
values (``301`` is the query ``"301"`` of a file); floats, booleans, dates and
missing values are refused, since no string of a file would match them.
As in a file, a (query, document) pair is listed once: twice is an error
naming both rows. Neither pandas nor polars is imported here: a frame is recognised by the
library that made it.
"""

from __future__ import annotations

import numpy as np

from .._utils.queries import id_kind, is_missing_id, series_values

__all__ = ["DataFrame", "frame_columns", "is_frame"]

#: The id columns of each layout, and each table's value column in it.
LAYOUTS = {
    "PyTerrier": {"ids": ("qid", "docno"), "Qrels": "label", "Run": "score"},
    "ir_measures": {"ids": ("query_id", "doc_id"), "Qrels": "relevance", "Run": "score"},
}


def is_frame(value) -> bool:
    """Whether ``value`` is a pandas or polars DataFrame."""
    library = type(value).__module__.partition(".")[0]
    return library in ("pandas", "polars") and type(value).__name__ == "DataFrame"


class _FrameType(type):
    def __instancecheck__(cls, value) -> bool:
        return is_frame(value)


class DataFrame(metaclass=_FrameType):
    """Stands for a pandas or polars DataFrame in parameter constraints
    (``isinstance(frame, DataFrame)``), without importing either library."""


# scikit-learn's validation error names a type "module.qualname", a builtin
# by its qualname alone: this reads "an instance of 'pandas or polars DataFrame'".
DataFrame.__module__ = "builtins"
DataFrame.__qualname__ = "pandas or polars DataFrame"


def _layout_help(kind: str) -> str:
    return " or ".join(f"{', '.join((*spec['ids'], spec[kind]))} ({name})"
                       for name, spec in LAYOUTS.items())


def _columns(frame, kind: str) -> tuple[str, str, str]:
    """The id and value columns of ``frame`` in the one layout it has."""
    names = [str(c) for c in frame.columns]
    what = "qrels" if kind == "Qrels" else "run"
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"The {what} DataFrame has several columns named {twice[0]!r}; give "
                         "each column a name of its own.")
    found = [name for name, spec in LAYOUTS.items() if set(spec["ids"]) <= set(names)]
    shown = names if len(names) <= 12 else names[:12] + ["..."]
    if len(found) != 1:
        problem = ("has the id columns of both layouts" if found
                   else "has the id columns of neither layout")
        raise ValueError(
            f"The {what} DataFrame {problem} (its columns: {shown}); it needs the columns "
            f"{_layout_help(kind)}: rename or drop columns to leave one layout.")
    spec = LAYOUTS[found[0]]
    value = spec[kind]
    if value not in names:
        raise ValueError(
            f"The {what} DataFrame has {found[0]}'s id columns {spec['ids'][0]!r} and "
            f"{spec['ids'][1]!r} but no {value!r} column (its columns: {shown}); a "
            f"{found[0]} {what} has the columns {', '.join((*spec['ids'], value))}.")
    return (*spec["ids"], value)


def _row(i: int) -> str:
    return f"row {i} (counted from 0)"


def frame_ids(series, column: str) -> np.ndarray:
    """The ids of a column as strings: text as it is, integers in decimal."""
    values = series_values(series)
    kind = values.dtype.kind
    if kind in "iu":
        return values.astype(str)
    if kind in "US":
        return values
    if kind == "O":
        return _object_ids(values, column)
    nan = np.flatnonzero(values != values) if kind in "fcmM" else np.array([], int)
    if nan.shape[0]:
        raise _missing(column, int(nan[0]), int(nan.shape[0]))
    first = values[0].item() if values.shape[0] else None
    raise ValueError(
        f"Column {column!r} holds {values.dtype} values (first: {first!r}), but ids are "
        "text, as in a TREC file: make it a string column (read the file with the ids as "
        "strings: pandas' dtype=str, polars' schema_overrides), or an integer column.")


def _object_ids(values: np.ndarray, column: str) -> np.ndarray:
    kinds = np.frompyfunc(id_kind, 1, 1)(values).astype(np.int8)
    if not kinds.any():
        return values
    bad = np.flatnonzero(kinds == 2)
    if bad.shape[0]:
        i = int(bad[0])
        value = values[i]
        if is_missing_id(value):
            raise _missing(column, i, int(bad.shape[0]))
        raise ValueError(
            f"Column {column!r} holds a {type(value).__name__} at {_row(i)}: {value!r}; ids "
            "are text, as in a TREC file (strings, or integers written in decimal).")
    out = values.copy()
    ints = kinds == 1
    out[ints] = [str(int(v)) for v in values[ints]]
    return out


def _missing(column: str, i: int, n: int) -> ValueError:
    return ValueError(
        f"Column {column!r} has a missing id at {_row(i)} ({n} in all); every row of a qrels "
        "or run needs its query and document id: drop or fill those rows.")


def frame_values(series, column: str) -> np.ndarray:
    """The numbers of a value column (labels or scores) as float64."""
    values = series_values(series)
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        bad = next(i for i, v in enumerate(values.tolist()) if not _is_number(v))
        raise ValueError(f"Column {column!r} must hold numbers; {_row(bad)} holds "
                         f"{values[bad]!r}.") from None


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def frame_columns(frame, kind: str) -> tuple:
    """``(qid ids, docno ids, values)`` of a DataFrame in one of the two layouts,
    for a table of ``kind`` (``"Qrels"`` or ``"Run"``)."""
    if not is_frame(frame):
        raise TypeError(f"{kind}.from_frame takes a pandas or polars DataFrame; got "
                        f"{type(frame).__name__}.")
    qid, docno, value = _columns(frame, kind)
    return (frame_ids(frame[qid], qid), frame_ids(frame[docno], docno),
            frame_values(frame[value], value))
