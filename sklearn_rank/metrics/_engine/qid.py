"""Query ids: what makes two rows one query (DESIGN §8).

The interface is :func:`qid_values` (ids validated into a form NumPy groups
exactly: the engine's inputs, :mod:`~sklearn_rank.metrics._engine.ids`, the
datasets) and, for validated arrays joined later (chunked evaluation, the
plan), :func:`id_kind` and :func:`concatenate_ids`, which keep that equality.

Rows belong to one query exactly when their ids are equal as Python values of
one type. Ids are validated here once, for every public entry that takes
``qid`` (the metrics, the splitters, ``QueryRanker``, chunked evaluation):

* NumPy arrays of a native dtype are grouped as they are (their values are
  what NumPy compares); NaN and NaT are refused.
* pandas string and categorical columns, pyarrow and polars string or binary
  columns are coded by their own library (:mod:`~sklearn_rank.metrics._engine._qid_columns`).
* Python sequences and object arrays must hold ids of one type. Numbers,
  bools, datetime64 and timedelta64 become native arrays; str, bytes, tuples,
  Decimal, big ints, ... are grouped by Python equality (a dict, or pandas'
  hash table for str and bytes when pandas is loaded), never through a
  fixed-width NumPy string: ``np.asarray(["a", "a\\x00"])`` merges the two
  ids, ``np.asarray(["a", b"a"])`` too, and padding to the longest id costs
  rows x longest x 4 bytes.

Mixed types (``1`` and ``1.0``, ``True`` and ``1``, ``"a"`` and ``b"a"``),
missing ids (None, NaN, NaT, ``pd.NA``), unhashable ids and ids with no total
order (frozensets: inclusion) are refused naming the first offending row:
query ids are reported sorted, so they must sort.
"""

from __future__ import annotations

import reprlib
import sys

import numpy as np

from ..._utils.validation import check_ordered
from ._qid_columns import column_codes

__all__ = ["concatenate_ids", "id_kind", "is_decimal", "qid_values"]

# Kinds of Python values that become native arrays, with the NumPy dtype kinds
# the conversion must give (anything else, e.g. ints beyond 64 bits converted
# to float64 by NumPy, is grouped as Python objects instead).
_NATIVE = {"bool": "b", "int": "iu", "float": "f", "complex": "c",
           "datetime64": "M", "timedelta64": "m"}
# Kinds of Python values that sort totally and are never missing.
_TOTAL = {"bool", "int", "str", "bytes"}
_MISSING = "missing"
_MISSING_TYPES = {"NoneType", "NAType", "NaTType", "C_NAType"}

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 40


def _short(value) -> str:
    """``repr`` of an id, cut to a few dozen characters (ids can be huge)."""
    return _repr.repr(value)


def _kind_of_type(t: type):
    """The kind of ids of type ``t``: NumPy scalars count as their Python twins."""
    if issubclass(t, bool | np.bool_):
        return "bool"
    if issubclass(t, int | np.integer):
        return "int"
    if issubclass(t, float | np.floating):
        return "float"
    if issubclass(t, complex | np.complexfloating):
        return "complex"
    if issubclass(t, str):
        return "str"
    if issubclass(t, bytes):
        return "bytes"
    if issubclass(t, np.datetime64):
        return "datetime64"
    if issubclass(t, np.timedelta64):
        return "timedelta64"
    if t.__name__ in _MISSING_TYPES:
        return _MISSING
    return t


def _kind_name(kind) -> str:
    return kind if isinstance(kind, str) else kind.__name__


def id_kind(q: np.ndarray):
    """The kind of the ids of a validated array (:func:`qid_values`'s values).

    Two validated arrays can be concatenated without changing which rows
    share a query only when their kinds are equal.
    """
    kind = q.dtype.kind
    if kind == "O":
        return _kind_of_type(type(q[0])) if q.shape[0] else None
    return {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex",
            "U": "str", "S": "bytes", "M": "datetime64", "m": "timedelta64"}.get(kind, kind)


def concatenate_ids(arrays) -> np.ndarray:
    """Concatenate validated id arrays without changing which ids are equal.

    NumPy promotes int64 with uint64 to float64 (merging 2**63 and 2**63 + 1),
    and pads fixed-width strings to the widest array: arrays of different
    dtype kinds, or strings that padding would blow up, are joined as Python
    objects instead.
    """
    kinds = {a.dtype.kind for a in arrays}
    if len(kinds) == 1:
        if kinds.pop() not in "US" or len({a.dtype for a in arrays}) == 1:
            return np.concatenate(arrays)
        n = sum(a.shape[0] for a in arrays)
        width = max(a.dtype.itemsize for a in arrays)
        if n * width <= 2 * sum(a.nbytes for a in arrays) + 64 * n:
            return np.concatenate(arrays)
    return np.concatenate([a.astype(object) for a in arrays])


def is_decimal(value) -> bool:
    """Whether ``value`` is a :class:`decimal.Decimal`. The module is not
    imported for this (no Decimal exists before it is imported), so that
    commands that never meet one do not pay for its import."""
    decimal = sys.modules.get("decimal")
    return decimal is not None and isinstance(value, decimal.Decimal)


def _is_missing(value) -> bool:
    """None, NaN, NaT, ``pd.NA`` and anything else not equal to itself."""
    if value is None or type(value).__name__ in _MISSING_TYPES:
        return True
    if isinstance(value, np.datetime64 | np.timedelta64):
        return bool(np.isnat(value))
    if is_decimal(value):  # a signaling NaN raises when compared
        return value.is_nan()
    differs = value != value  # NaN-like values differ from themselves
    # Arrays answer arrays: not missing (they are refused as unhashable).
    return bool(differs) if isinstance(differs, bool | np.bool_) else False


def _missing_error(name: str, count: int, first: int, what: str, value) -> ValueError:
    shown = "" if value is None else f" ({_short(value)})"
    return ValueError(
        f"{name} has {count} missing ({what}) value(s), first at row {first}{shown}; "
        "every row needs a query id: drop those rows or fill in their ids."
    )


def _check_native(q: np.ndarray, name: str) -> None:
    """Refuse NaN / NaT in a native array."""
    kind = q.dtype.kind
    if kind in "fc":
        bad, what = np.isnan(q), "NaN"
    elif kind in "Mm":
        bad, what = np.isnat(q), "NaT"
    else:
        return
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise _missing_error(name, int(bad.sum()), first, what, q[first])


def qid_values(qid, name: str = "qid") -> tuple[np.ndarray, np.ndarray | None]:
    """Validate query ids and give them a form NumPy groups exactly.

    Parameters
    ----------
    qid : array-like of shape (n_rows,)
        One query id per row.
    name : str, default="qid"
        The argument's name, for messages.

    Returns
    -------
    q : ndarray of shape (n_rows,)
        Ids of a native dtype whose equality is the ids' equality, or (when
        ``labels`` is given) the rank of each row's id among the sorted ids.
    labels : ndarray of shape (n_queries,) or None
        The sorted unique ids as Python objects, when ``q`` holds ranks.

    Raises
    ------
    ValueError
        Ids not 1-D, or missing values (None, NaN, NaT, NA).
    TypeError
        Ids in a set or a mapping (no order: which row gets which id would
        follow ``PYTHONHASHSEED``), ids of mixed types, unhashable ids, or
        ids that cannot be sorted.
    """
    check_ordered(qid, name, item="id")
    if isinstance(qid, str | bytes) or not (hasattr(qid, "__array__")
                                            or hasattr(qid, "__len__")):
        q = np.asarray(qid)  # a scalar: refused as not 1-D just below
    elif hasattr(qid, "__array__"):
        coded = column_codes(qid)
        if coded is not None:
            return _ranked(*coded, name)
        # polars turns strings into a fixed-width 'U' array (dropping trailing
        # NULs, padding every row to the longest id); to_numpy keeps objects.
        polars = type(qid).__module__.partition(".")[0] == "polars"
        q = qid.to_numpy() if polars and hasattr(qid, "to_numpy") else np.asarray(qid)
    else:  # a Python sequence: never let NumPy coerce [1, "a"] or ["a", b"a"]
        return _from_objects(list(qid), name)
    if q.ndim != 1:
        raise ValueError(f"{name} must be 1-D with one query id per row, got shape {q.shape}.")
    if q.dtype.kind == "O":
        return _from_objects(q.tolist(), name, q)
    if q.dtype.kind == "T":  # NumPy's variable-width StringDType
        q = q.astype(object)
        return _from_objects(q.tolist(), name, q)
    _check_native(q, name)
    return q, None


def _ranked(codes: np.ndarray, uniques: list, name: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`qid_values` from codes into ``uniques`` (one sortable kind, each
    value once; -1 for a missing id): ranks and the sorted ids that occur."""
    missing = codes < 0
    if missing.any():
        first = int(np.argmax(missing))
        raise _missing_error(name, int(missing.sum()), first, "None/NaN", None)
    m = len(uniques)
    order = sorted(range(m), key=uniques.__getitem__)
    rank = np.empty(m, dtype=np.intp)
    rank[order] = np.arange(m)
    q = rank[codes]
    ordered = list(map(uniques.__getitem__, order))
    used = np.zeros(m, dtype=bool)
    used[q] = True
    if not used.all():  # unused categories
        q = (np.cumsum(used) - 1)[q]
        ordered = [v for v, keep in zip(ordered, used.tolist(), strict=True) if keep]
    return q, _labels(ordered)


def _labels(ordered: list) -> np.ndarray:
    """The sorted unique ids as an array: fixed-width str or bytes when that
    keeps every id (NumPy drops trailing NULs) and costs little more than the
    ids themselves (no padding to one huge id), else Python objects."""
    m = len(ordered)
    first = ordered[0] if m else None
    if isinstance(first, str | bytes):
        lengths = np.fromiter(map(len, ordered), dtype=np.intp, count=m)
        width = max(int(lengths.max()), 1)
        nul = "\x00" if isinstance(first, str) else b"\x00"
        if width * m <= 2 * int(lengths.sum()) + 16 * m and not any(
                v.endswith(nul) for v in ordered):
            return np.array(ordered, dtype=f"{'U' if isinstance(first, str) else 'S'}{width}")
    return np.fromiter(ordered, dtype=object, count=m)


def _from_objects(values: list, name: str, array: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`qid_values` for a list of Python values (``array``: the same as
    an object array, when there is one)."""
    if not values:
        return np.empty(0, dtype=np.intp), None
    kinds = {_kind_of_type(t) for t in set(map(type, values))}
    if len(kinds) > 1 or _MISSING in kinds:
        _diagnose(values, name)  # raises
    kind = kinds.pop()
    if kind in _NATIVE:
        q = np.asarray(values, dtype=bool if kind == "bool" else None)
        if q.ndim == 1 and q.dtype.kind in _NATIVE[kind]:
            _check_native(q, name)
            return q, None
        if kind == "int":  # beyond 64 bits: exact Python ints
            values = [int(v) for v in values]
    elif kind in ("str", "bytes") and "pandas" in sys.modules:
        # pandas' hash table (C, no Python call per row) groups faster than a
        # dict, with the same equality for str and bytes (hash and ==). Used
        # only when pandas is loaded.
        if array is None:
            array = np.empty(len(values), dtype=object)
            array[:] = values
        codes, uniques = sys.modules["pandas"].factorize(array)
        return _ranked(codes, uniques.tolist(), name)
    return _by_equality(values, kind, name)


def _by_equality(values: list, kind, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Rank codes and sorted unique ids, grouping by Python equality."""
    try:
        index = dict.fromkeys(values)  # first-appearance order
    except Exception:  # unhashable ids, or a raising __eq__/__hash__
        _diagnose(values, name)
        raise  # pragma: no cover - _diagnose raises
    uniques = list(index)
    if kind not in _TOTAL and any(map(_safe_missing, uniques)):
        _diagnose(values, name)
    ordered = _sorted(values, uniques, index, kind, name)
    for rank, value in enumerate(ordered):
        index[value] = rank
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.intp, count=len(values))
    return codes, _labels(ordered)


def _sorted(values, uniques, index, kind, name) -> list:
    """The unique ids in order, refusing ids that have no total order."""
    try:
        ordered = sorted(uniques)
    except Exception as exc:  # e.g. tuples of mixed types
        pair = _failing_pair(uniques)
        raise _order_error(values, index, pair, kind, name, exc) from None
    if kind not in _TOTAL:
        # A partial order (frozensets: inclusion) sorts without an error but
        # not into one order: every neighbour must be strictly smaller.
        for a, b in zip(ordered[:-1], ordered[1:], strict=True):
            try:
                ok = a < b
                ok = ok if isinstance(ok, bool | np.bool_) else False
            except Exception:
                ok = False
            if not ok:
                raise _order_error(values, index, (a, b), kind, name, None)
    return ordered


def _failing_pair(uniques):
    """The pair of ids whose comparison stops ``sorted(uniques)``, if any."""
    last = []

    class Recording:
        __slots__ = ("value",)

        def __init__(self, value):
            self.value = value

        def __lt__(self, other):
            last[:] = [self.value, other.value]
            return self.value < other.value

    try:
        sorted(uniques, key=Recording)
    except Exception:
        return tuple(last) if last else None
    return None  # pragma: no cover - the plain sort failed on the same ids


def _first_rows(values, index, wanted) -> list[int]:
    """First row holding each of the ``wanted`` ids (identified through the dict)."""
    for rank, key in enumerate(index):
        index[key] = rank
    ranks = [index[w] for w in wanted]
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.intp, count=len(values))
    return [int(np.argmax(codes == r)) for r in ranks]


def _order_error(values, index, pair, kind, name, exc) -> TypeError:
    what = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
    where = ""
    if pair is not None:
        a, b = sorted(_first_rows(values, index, pair))
        where = (f": the ids at rows {a} ({_short(values[a])}) and {b} "
                 f"({_short(values[b])}) are neither equal nor ordered")
    return TypeError(
        f"{name} values cannot be compared with each other{where}{what}; query ids are "
        f"reported sorted, so they must have one order ({_kind_name(kind)} ids do not): "
        "use ids of a single sortable type, e.g. int, str or tuples of them."
    )


def _diagnose(values: list, name: str):
    """Raise the error that describes the first offending row of ``values``."""
    n_missing, first_missing, mismatch, first_kind = 0, None, None, None
    for i, value in enumerate(values):
        kind = _kind_of_type(type(value))
        if kind == _MISSING or _safe_missing(value):
            n_missing += 1
            first_missing = i if first_missing is None else first_missing
            continue
        if first_kind is None:
            first_kind = (i, kind)
        elif mismatch is None and kind != first_kind[1]:
            mismatch = i
    if n_missing:
        raise _missing_error(name, n_missing, first_missing, "None/NaN",
                             values[first_missing])
    if mismatch is not None:
        j, kind = first_kind
        raise TypeError(
            f"{name} values cannot be compared with each other: they mix types (row "
            f"{mismatch} holds {_kind_name(_kind_of_type(type(values[mismatch])))} "
            f"{_short(values[mismatch])}, row {j} holds {_kind_name(kind)} "
            f"{_short(values[j])}). Rows share a query only when their ids are equal and "
            "of one type: use query ids of a single type, e.g. all int or all str."
        )
    seen = {}
    for i, value in enumerate(values):
        try:
            seen.setdefault(value, i)
        except TypeError as exc:
            if isinstance(value, list | np.ndarray):
                raise ValueError(
                    f"{name} must be 1-D with one query id per row: row {i} holds a "
                    f"{type(value).__name__} ({_short(value)}), not an id."
                ) from None
            raise TypeError(
                f"{name} must be 1-D with one hashable query id per row: row {i} holds "
                f"{type(value).__name__} {_short(value)} ({exc}); use ints, strings or "
                "tuples as ids."
            ) from None
        except Exception as exc:  # a raising __eq__ or __hash__
            raise TypeError(
                f"{name} value at row {i} ({_short(value)}) cannot serve as a query id: "
                f"comparing or hashing it raised {type(exc).__name__}: {exc}"
            ) from None
    raise TypeError(f"{name} values cannot serve as query ids.")  # pragma: no cover


def _safe_missing(value) -> bool:
    try:
        return _is_missing(value)
    except Exception:  # judged by hashing and comparing later
        return False
