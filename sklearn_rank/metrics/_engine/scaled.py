"""Gains scaled per query for ratios (NDCG): each query's gains divided by a
power of two near the largest when it lies outside [2**-400, 2**400], which
changes no ratio and keeps every sum finite (labels >= 1024 included).
:class:`Scaled` is the column; :func:`rows_scaled` scales any rows (the
discounts too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .columns import LABELS, Column, Gain, NamedGain

__all__ = ["SAFE", "Scaled", "rows_scaled"]

_LN2 = math.log(2.0)
# Gains whose largest value per query lies in [1/SAFE, SAFE] (or is 0) sum
# without overflow or loss to underflow; others are scaled by a power of two
# (exact) where a ratio is computed (NDCG).
SAFE = 2.0**400
#: The largest label whose gain 2**l - 1 needs no scaling (2**400 = SAFE).
_BIG_LABEL = 400


def _out_of_range(top: np.ndarray, big: float) -> bool:
    """Whether some row's largest value ``top`` is ``big`` or more, or
    positive and below 1 / SAFE: that row needs scaling."""
    return bool((top >= big).any() or ((top > 0) & (top < 1 / SAFE)).any())


def _exponential_scaled(labels: np.ndarray) -> np.ndarray | None:
    """(2**l - 1) / 2**e per row of a (q, w) block of labels, e an integer near
    the row's largest label when that label is >= 400 (computed as
    2**(l - e) - 2**-e, so labels >= 1024 work), or a power of two scaling
    tiny labels (< 2**-400) up; None when no row needs it."""
    top = labels.max(axis=1, keepdims=True)
    if not _out_of_range(top, _BIG_LABEL):
        return None
    big = top >= _BIG_LABEL
    tiny = (top > 0) & (top < 1 / SAFE)
    shift = np.where(big, np.floor(top), 0.0)
    with np.errstate(over="ignore"):
        out = np.exp2(labels - shift) - np.exp2(-shift)
    low = (labels > 0) & (labels < 1)  # (label 0 gives exactly 0 above)
    if low.any():
        down = np.minimum(shift, 2000).astype(np.int64)  # (2**-2000: 0 anyway)
        out = np.where(low, np.ldexp(np.expm1(labels * _LN2), -down), out)
    if tiny.any():  # l < 2**-400: 2**l - 1 = l ln 2 to float64 precision
        up = np.frexp(np.where(tiny, top, 1.0))[1]
        out = np.where(tiny, np.ldexp(labels, -up) * _LN2, out)
    return out


def rows_scaled(values: np.ndarray) -> np.ndarray | None:
    """Each row of non-negative ``values`` divided by a power of two near its
    maximum when that maximum is outside [1/SAFE, SAFE]; None if none is."""
    top = values.max(axis=1, keepdims=True)
    if not _out_of_range(top, SAFE):
        return None
    out_of_range = (top >= SAFE) | ((top > 0) & (top < 1 / SAFE))
    shift = np.where(out_of_range, np.frexp(top)[1], 0)
    return np.ldexp(values, -shift)


@dataclass(frozen=True)
class Scaled(Column):
    """A gain column with each query's gains divided by a power of two near
    the largest when it lies outside [2**-400, 2**400] (for ratios: NDCG). It
    changes no ratio and keeps every sum finite, labels >= 1024 included. A
    block's array is None when none of its queries needs scaling: the plain
    gain column then serves, bit for bit."""

    gain: Gain
    per_row: ClassVar[bool] = False

    def block(self, ranking):
        exponential = self.gain == NamedGain("exponential")
        base = LABELS if exponential else self.gain
        if not _out_of_range(ranking.row_max(base), _BIG_LABEL if exponential else SAFE):
            return None  # (found without the block where the block reads rows)
        if exponential:
            return _exponential_scaled(ranking.unranked(LABELS))
        return rows_scaled(ranking.unranked(self.gain))
