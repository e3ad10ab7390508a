"""Numeric inputs: labels, scores and weights as float64, exactly where it matters.

Labels and weights are real numbers; float64 keeps them to its rounding.
Scores only order documents, so they must keep their order exactly: integers
beyond 2**53, NumPy's ``longdouble`` and Python numbers of any size (ints
beyond int64, fractions, decimals) lose ties or order when cast to float64
(2**60 and 2**60 + 1 become one float). Such scores are replaced by their
dense ranks, which are exact float64 values that order and tie as the given
numbers do (DESIGN §8).
"""

from __future__ import annotations

import math
from decimal import Decimal
from numbers import Rational

import numpy as np

__all__ = ["as_numeric", "check_finite", "scaled_mean"]

_EXACT = 2**53  # integers up to this magnitude are exact in float64


def _scalar(value):
    return value.item() if isinstance(value, np.generic) else value


def as_numeric(x, name: str, *, exact_order: bool = False) -> np.ndarray:
    """``x`` as a float64 array of the same shape.

    With ``exact_order`` (scores), values that float64 cannot hold exactly
    are replaced by their dense ranks (order and ties kept exactly; NaN and
    infinite values stay NaN, for :func:`check_finite` to report).
    """
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(
            f"{name} could not be converted to an array ({exc}); pass a 1-D array "
            "with one value per row, or a rectangular 2-D array."
        ) from None
    kind = arr.dtype.kind
    if (kind == "f" and not isinstance(x, np.ndarray) and arr.size
            and np.abs(arr).max() >= _EXACT and _holds_ints(x)):
        # NumPy turns Python ints beyond int64 into floats: keep them exact.
        arr, kind = np.array(x, dtype=object), "O"
    if kind == "b":
        return arr.astype(np.float64)
    if kind == "O":
        return _from_objects(arr, name, exact_order)
    if kind not in "iuf":
        raise TypeError(
            f"{name} must hold numbers, got an array of dtype {arr.dtype}; "
            f"convert it with {name}.astype(float)."
        )
    if exact_order and arr.size and _inexact(arr):
        return _dense_ranks(arr)
    return np.asarray(arr, dtype=np.float64)


def _holds_ints(x) -> bool:
    """Whether a (nested) sequence holds a Python int (not bool)."""
    stack = [x]
    while stack:
        for v in stack.pop():
            if isinstance(v, list | tuple):
                stack.append(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                return True
    return False


def _inexact(arr: np.ndarray) -> bool:
    """Whether casting ``arr`` to float64 could merge or reorder values."""
    if arr.dtype.kind in "iu":
        return arr.dtype.itemsize > 4 and (arr.max() > _EXACT or arr.min() < -_EXACT)
    return arr.dtype.itemsize > 8  # longdouble


def _dense_ranks(arr: np.ndarray) -> np.ndarray:
    finite = np.isfinite(arr) if arr.dtype.kind == "f" else np.ones(arr.shape, bool)
    out = np.full(arr.shape, np.nan)
    out[finite] = np.unique(arr[finite], return_inverse=True)[1]
    return out


def _is_number(v) -> bool:
    return (isinstance(v, float | Rational | Decimal | np.integer | np.floating)
            and not isinstance(v, np.timedelta64))


def _is_missing(v) -> bool:
    return v is None or type(v).__name__ in ("NAType", "NaTType")


def _finite(v) -> bool:
    if isinstance(v, Decimal):
        return v.is_finite()
    if isinstance(v, Rational):
        return True
    return math.isfinite(v)


def _from_objects(arr: np.ndarray, name: str, exact_order: bool) -> np.ndarray:
    """An object array of Python or NumPy numbers (any size) as float64."""
    flat = arr.ravel().tolist()
    for i, v in enumerate(flat):
        if not (_is_number(v) or _is_missing(v)):
            raise TypeError(
                f"{name} must hold numbers, got {type(v).__name__} {v!r} at position {i}; "
                f"convert it with {name}.astype(float)."
            )
    ok = [not _is_missing(v) and _finite(v) for v in flat]
    if exact_order:
        # Python compares ints, floats, fractions and decimals exactly.
        values = sorted({v for v, good in zip(flat, ok, strict=True) if good})
        rank = {v: float(i) for i, v in enumerate(values)}
        out = [rank[v] if good else math.nan for v, good in zip(flat, ok, strict=True)]
    else:
        out = []
        for i, (v, good) in enumerate(zip(flat, ok, strict=True)):
            if not good:
                out.append(math.nan)
                continue
            try:
                out.append(float(v))
            except OverflowError:
                raise ValueError(
                    f"{name} holds a number too large for float64 at position {i} "
                    f"({str(v)[:20]}...); rescale it."
                ) from None
    return np.array(out, dtype=np.float64).reshape(arr.shape)


def check_finite(arr: np.ndarray, name: str, row_qid) -> None:
    """Raise if ``arr`` holds NaN or infinite values, naming the first query."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = arr.sum()
    if np.isfinite(total):  # fast path: one reduction, no temporary mask
        return
    bad = ~np.isfinite(arr)
    if not bad.any():  # the sum overflowed on large but finite values
        return
    first = np.flatnonzero(bad)[0]
    raise ValueError(
        f"{name} contains {int(bad.sum())} NaN or infinite value(s) (first in query "
        f"{_scalar(row_qid(first))!r}); remove or impute them before scoring."
    )


def scaled_mean(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The (weighted) mean of finite values, without intermediate overflow.

    Weights whose largest is outside [2**-500, 2**500] are first divided by a
    power of two near it (exact; subnormal weights keep their precision), and
    when a sum still overflows (values near 1e308) the values are scaled the
    same way. Otherwise this is the plain formula, bit for bit.
    """
    if weights is not None:
        top_w = _exponent(weights)
        if abs(top_w) > 500:
            weights = np.ldexp(weights, -top_w)
    with np.errstate(over="ignore", invalid="ignore"):
        if weights is None:
            top, bottom = values.sum(), values.shape[0]
        else:
            top, bottom = (values * weights).sum(), weights.sum()
    if np.isfinite(top) and np.isfinite(bottom):
        return float(top / bottom)
    v_exp = _exponent(values)
    v = np.ldexp(values, -v_exp)
    if weights is None:
        mean = v.sum() / v.shape[0]
    else:
        w = np.ldexp(weights, -_exponent(weights))
        mean = (v * w).sum() / w.sum()
    return float(np.ldexp(mean, v_exp))


def _exponent(x: np.ndarray) -> int:
    """e with max |x| / 2**e in [0.5, 1) (0 for an all-zero array)."""
    top = float(np.abs(x).max()) if x.size else 0.0
    return int(np.frexp(top)[1]) if top > 0 else 0
