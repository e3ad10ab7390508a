"""Rows sorted in descending order: the ideal ranking of a block.

:func:`sorted_descending` sorts only the nonzero values of a block where few
are nonzero (a TREC ranking's relevant documents among hundreds retrieved) and
puts them in place (:func:`descending_cells`: where they land); it is
:func:`sorted_descending_reference`'s full sort otherwise, and its arrangement
always (up to the sign of a zero).
"""

from __future__ import annotations

import numpy as np

__all__ = ["descending_cells", "placed_descending", "sorted_descending",
           "sorted_descending_reference"]


def sorted_descending(values: np.ndarray) -> np.ndarray:
    """Each row of ``values`` sorted in descending order (a new array).

    Where few values are nonzero (judgments of a TREC run: a few relevant
    documents among hundreds retrieved) only those are sorted and put in
    place: the positive ones first, the negative ones last, zeros between,
    which is the full sort's arrangement (up to the sign of a zero).
    """
    flat = np.flatnonzero(values != 0)
    return placed_descending(flat // values.shape[1], values.ravel()[flat], values.shape,
                             lambda: values)


def placed_descending(rows: np.ndarray, nonzero: np.ndarray, shape: tuple,
                      block) -> np.ndarray:
    """:func:`sorted_descending` of a (q, w) block from its ``nonzero`` values
    and their ``rows``, in row-major order (``block()``, the block itself,
    is sorted instead where a quarter or more of its values are nonzero)."""
    if 4 * nonzero.shape[0] > shape[0] * shape[1]:
        return sorted_descending_reference(block())
    rows, cols, values = descending_cells(rows, nonzero, shape)
    out = np.zeros(shape, dtype=values.dtype)
    out[rows, cols] = values
    return out


def descending_cells(rows: np.ndarray, nonzero: np.ndarray, shape: tuple):
    """Where the ``nonzero`` values of a (q, w) block (their ``rows``, in
    row-major order) lie once each row is sorted descending: ``(rows, cols,
    values)``, row by row and column by column (the positive values first,
    the negative ones last, zeros between)."""
    width = shape[1]
    order = np.lexsort((-nonzero, rows))  # by row, each row's values descending
    nonzero = nonzero[order]  # (rows stay sorted: they were)
    counts = np.bincount(rows, minlength=shape[0])
    first = (np.cumsum(counts) - counts)[rows]
    place = np.arange(nonzero.shape[0]) - first  # rank among the row's nonzero values
    place = np.where(nonzero > 0, place, width - counts[rows] + place)
    return rows, place, nonzero


def sorted_descending_reference(values: np.ndarray) -> np.ndarray:
    """:func:`sorted_descending` by a full sort of every row."""
    return np.sort(values, axis=1)[:, ::-1]
