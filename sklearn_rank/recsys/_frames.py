"""User–item frames (pandas, polars, Arrow tables) as NumPy columns and integer codes.

A frame's columns are read once, checked at the boundary (a missing column, a
missing id, ids of two kinds, scores that are not numbers: an error that names
the frame, the column and the first offending row), and turned into arrays.
Users and items keep their own type: integer ids stay integers, text stays
text; ``1`` and ``"1"`` are different ids, so a frame whose users are integers
and another whose users are strings is an error, not an empty join.

Items get codes 0..n_items-1 (:class:`Items`): the catalog first (codes
0..n_catalog-1, in the order of their ids), then the items recommended or
tested outside it. Neither pandas nor polars nor pyarrow is imported here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._utils.queries import id_kind, is_missing_id, series_values

__all__ = ["Frame", "Items", "code_type", "codes_in", "column_names", "frame_kind",
           "ids_of", "numbers_of", "read_columns", "same_kind", "sorted_unique", "unique_ids"]


def frame_kind(value) -> str | None:
    """``"pandas"``, ``"polars"``, ``"arrow"`` or ``"dask"`` for a frame of
    that library (a pyarrow ``Table``), else None."""
    library = type(value).__module__.partition(".")[0]
    name = type(value).__name__
    if library in ("pandas", "polars") and name == "DataFrame":
        return library
    if library == "pyarrow" and name == "Table":
        return "arrow"
    if library in ("dask", "dask_expr") and name == "DataFrame":
        return "dask"
    return None


class _FrameType(type):
    def __instancecheck__(cls, value) -> bool:
        return frame_kind(value) is not None


class Frame(metaclass=_FrameType):
    """Stands for a pandas or polars DataFrame, a pyarrow Table or a Dask
    DataFrame in parameter constraints, without importing any of them."""


Frame.__module__ = "builtins"  # read as "an instance of 'pandas, polars, ...'"
Frame.__qualname__ = "pandas or polars DataFrame, pyarrow Table or Dask DataFrame"


def column_names(frame) -> list[str]:
    """The column names of a frame (a pyarrow Table's too)."""
    if frame_kind(frame) == "arrow":
        return [str(c) for c in frame.column_names]
    return [str(c) for c in frame.columns]


def _column(frame, name: str) -> np.ndarray:
    if frame_kind(frame) == "arrow":  # text as objects; a null as None (ints: NaN)
        return frame.column(name).to_numpy(zero_copy_only=False)
    return series_values(frame[name])


def read_columns(frame, what: str, columns: dict) -> dict:
    """``{role: array}`` of the ``columns`` (role -> (column name, option that
    names it)) of ``frame``, the argument ``what``; a column named None is left
    out. A missing column is an error that lists the frame's columns and names
    the option to set."""
    if frame_kind(frame) in (None, "dask"):
        raise TypeError(f"{what} must be a pandas or polars DataFrame or a pyarrow Table; "
                        f"got {type(frame).__name__}.")
    names = column_names(frame)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{what} has several columns named {twice[0]!r}; give each column a "
                         "name of its own.")
    out = {}
    for role, (name, option) in columns.items():
        if name is None:
            continue
        if str(name) not in names:
            shown = names if len(names) <= 12 else names[:12] + ["..."]
            raise ValueError(
                f"{what} has no column {name!r} (its columns: {shown}); rename the column of "
                f"{role}s to {name!r} or pass {option}= naming it.")
        out[role] = _column(frame, str(name))
    return out


def _row(i: int) -> str:
    return f"row {i} (counted from 0)"


def ids_of(values: np.ndarray, what: str, column: str) -> np.ndarray:
    """The ids of a column: int64 for integers, an object array of str for text.

    Missing values, floats, booleans and a mix of strings and integers are
    errors naming ``what`` (the argument), the column and the first bad row.
    """
    kind = values.dtype.kind
    if kind in "iu":
        if kind == "u" and values.shape[0] and values.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{what}: column {column!r} holds integers beyond int64.")
        return values.astype(np.int64, copy=False)
    if kind == "U":
        return values.astype(object)
    if kind == "O":
        return _object_ids(values, what, column)
    if kind == "f" and values.shape[0] and np.isnan(values).any():
        i = int(np.flatnonzero(np.isnan(values))[0])
        raise ValueError(f"{what}: column {column!r} has a missing id at {_row(i)}; drop or "
                         "fill those rows.")
    first = values[0].item() if values.shape[0] else None
    raise ValueError(
        f"{what}: column {column!r} holds {values.dtype} values (first: {first!r}), but ids "
        "are strings or integers: convert the column (e.g. .astype('int64') or .astype(str)).")


def _pandas():
    """pandas if it is installed (its C routines speed up text ids), else None."""
    try:
        import pandas
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return pandas


def _object_ids(values: np.ndarray, what: str, column: str) -> np.ndarray:
    """The ids of an object column: all strings, or all integers (as int64)."""
    pandas = _pandas()
    if pandas is not None and values.shape[0] and pandas.api.types.infer_dtype(
            values, skipna=False) == "string":
        return values  # every value a str (checked in C)
    kinds = np.frompyfunc(id_kind, 1, 1)(values).astype(np.int8)
    bad = np.flatnonzero(kinds == 2)
    if bad.shape[0]:
        i = int(bad[0])
        value = values[i]
        if is_missing_id(value):
            raise ValueError(
                f"{what}: column {column!r} has a missing id at {_row(i)} "
                f"({bad.shape[0]} bad rows in all); drop or fill those rows.")
        raise ValueError(
            f"{what}: column {column!r} holds a {type(value).__name__} at {_row(i)}: "
            f"{value!r}; ids are strings or integers.")
    if values.shape[0] and kinds.min() != kinds.max():
        i = int(np.flatnonzero(kinds != kinds[0])[0])
        raise ValueError(
            f"{what}: column {column!r} mixes strings and integers ({values[0]!r} at "
            f"row 0, {values[i]!r} at {_row(i)}); make every id of the column one type "
            "(e.g. .astype(str)).")
    if values.shape[0] and kinds[0] == 1:
        return values.astype(np.int64)
    return values


def same_kind(ids: dict) -> None:
    """Refuse id columns of different kinds (``{label: ids}``): integers in one
    frame and strings in another would never match."""
    kinds = {label: ("integers" if a.dtype.kind == "i" else "strings")
             for label, a in ids.items() if a.shape[0]}
    if len(set(kinds.values())) > 1:
        shown = ", ".join(f"{label} holds {kind}" for label, kind in kinds.items())
        raise ValueError(f"Ids of one kind must match across frames, but {shown}; convert the "
                         "columns to one type (e.g. .astype(str) on each) so that the same "
                         "user or item has the same id everywhere.")


def numbers_of(values: np.ndarray, what: str, column: str, *, finite: bool = False
               ) -> np.ndarray:
    """A column of numbers (scores, ratings) as float64: missing values (NaN)
    and, with ``finite``, infinities are errors naming the first row."""
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        bad = next(i for i, v in enumerate(values.tolist()) if not _is_number(v))
        raise ValueError(f"{what}: column {column!r} must hold numbers; {_row(bad)} holds "
                         f"{values[bad]!r}.") from None
    bad = np.flatnonzero(~np.isfinite(out) if finite else np.isnan(out))
    if bad.shape[0]:
        raise ValueError(f"{what}: column {column!r} holds {out[bad[0]]} at {_row(int(bad[0]))}"
                         f" ({bad.shape[0]} such rows); drop or fill them.")
    return out


def _is_number(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return value is not None


def unique_ids(ids: np.ndarray) -> np.ndarray:
    """The sorted distinct ids (integers, or strings compared as Python strings)."""
    if ids.dtype.kind == "i":
        if ids.shape[0] and 0 <= ids.min() and ids.max() < 4 * ids.shape[0] + 1024:
            present = np.zeros(int(ids.max()) + 1, dtype=bool)  # O(n), no sort
            present[ids] = True
            return np.flatnonzero(present).astype(np.int64)
        return sorted_unique(ids)
    pandas = _pandas()
    distinct = pandas.unique(ids) if pandas is not None else set(ids.tolist())
    return np.asarray(sorted(distinct), dtype=object)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an int64 array (a sort: NumPy's hash-based
    ``np.unique`` is several times slower on millions of integers)."""
    out = np.sort(values)
    if out.shape[0] < 2:
        return out
    return out[np.concatenate(([True], out[1:] != out[:-1]))]


def code_type(n: int):
    """The integer type of codes 0..n-1 (and -1): int32 when it holds them."""
    return np.int32 if n < 2**31 - 1 else np.int64


def codes_in(ids: np.ndarray, vocabulary: np.ndarray) -> np.ndarray:
    """The position of each id in the sorted ``vocabulary`` (-1: not in it)."""
    dtype = code_type(vocabulary.shape[0])
    if vocabulary.shape[0] == 0 or ids.shape[0] == 0:
        return np.full(ids.shape[0], -1, dtype=dtype)
    if ids.dtype.kind == "i" and vocabulary.dtype.kind == "i":
        low, high = int(vocabulary[0]), int(vocabulary[-1])
        if high - low < 4 * (ids.shape[0] + vocabulary.shape[0]) + 1024:
            table = np.full(high - low + 1, -1, dtype=dtype)  # a direct lookup table
            table[vocabulary - low] = np.arange(vocabulary.shape[0], dtype=dtype)
            if low <= int(ids.min()) and int(ids.max()) <= high:
                return table[ids - low] if low else table[ids]
            inside = (ids >= low) & (ids <= high)
            out = np.full(ids.shape[0], -1, dtype=dtype)
            out[inside] = table[ids[inside] - low]
            return out
    if ids.dtype.kind == "O" or vocabulary.dtype.kind == "O":
        # text: a dict lookup per id (a binary search would compare Python strings
        # some 20 times per id)
        pandas = _pandas()
        if pandas is not None:  # its hash table, in C
            return pandas.Index(vocabulary, dtype=object).get_indexer(ids).astype(dtype)
        position = dict(zip(vocabulary.tolist(), range(vocabulary.shape[0]), strict=True))
        get = position.get
        return np.fromiter((get(v, -1) for v in ids.tolist()), dtype=dtype,
                           count=ids.shape[0])
    at = np.searchsorted(vocabulary, ids)
    np.minimum(at, vocabulary.shape[0] - 1, out=at)
    found = vocabulary[at] == ids
    return np.where(found, at, -1).astype(dtype)


@dataclass(frozen=True)
class Items:
    """The item vocabulary: codes 0..n_catalog-1 for the catalog, in id order,
    then the other items (recommended or tested outside it), in id order.

    Attributes
    ----------
    ids : ndarray of shape (n_items,)
        The id of each code.
    n_catalog : int
        Number of catalog items (codes below it).
    order : ndarray of shape (n_items,)
        Each code's position among all item ids sorted (the tie-break key).
    """

    ids: np.ndarray
    n_catalog: int
    order: np.ndarray
    sorted_ids: np.ndarray
    code_of_sorted: np.ndarray

    @classmethod
    def of(cls, catalog: np.ndarray, others: list) -> Items:
        """The vocabulary of the ``catalog`` ids and of the ids in ``others``."""
        catalog = unique_ids(catalog)
        every = unique_ids(np.concatenate([catalog, *others])) if others else catalog
        in_catalog = np.zeros(every.shape[0], dtype=bool)
        if catalog.shape[0]:
            in_catalog[codes_in(catalog, every)] = True
        # codes: catalog items first, both groups in id order
        dtype = code_type(every.shape[0])
        by_code = np.concatenate([np.flatnonzero(in_catalog),
                                  np.flatnonzero(~in_catalog)]).astype(dtype)
        code_of_sorted = np.empty_like(by_code)
        code_of_sorted[by_code] = np.arange(by_code.shape[0], dtype=dtype)
        return cls(every[by_code], int(catalog.shape[0]), by_code, every, code_of_sorted)

    @property
    def n_items(self) -> int:
        return int(self.ids.shape[0])

    def codes(self, ids: np.ndarray) -> np.ndarray:
        """The codes of ``ids`` (every one in the vocabulary)."""
        return self.code_of_sorted[codes_in(ids, self.sorted_ids)]
