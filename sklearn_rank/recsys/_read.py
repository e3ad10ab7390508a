"""The three frames of a recommender evaluation, read and checked once.

``recs`` (user, item, score), ``test`` (user, item[, rating]) and ``train``
(user, item) become :class:`Interactions`: NumPy columns whose errors name the
frame, the column and the row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._frames import column_names, ids_of, numbers_of, read_columns, same_kind
from ._lists import duplicate_error

__all__ = ["Interactions", "catalog_ids", "check_kinds", "read_interactions"]


@dataclass(frozen=True)
class Interactions:
    """One frame's rows.

    Attributes
    ----------
    what : str
        The argument's name (``"recs"``, ``"test"``, ``"train"``).
    user, item : ndarray of shape (n_rows,)
        Ids: int64, or objects (str).
    score : ndarray of shape (n_rows,) or None
        ``recs``' scores (without a score column: minus the row number, so
        that rows rank in their order).
    label : ndarray of shape (n_rows,) or None
        ``test``'s relevance levels (1 without a rating column).
    columns : tuple of str
        The user and item column names (for messages).
    """

    what: str
    user: np.ndarray
    item: np.ndarray
    score: np.ndarray | None
    label: np.ndarray | None
    columns: tuple

    def duplicate_error(self, row_a: int, row_b: int) -> ValueError:
        """The error for the same (user, item) pair at ``row_a`` and ``row_b``."""
        return duplicate_error(_plain(self.user[row_a]), _plain(self.item[row_a]), row_a,
                                row_b, self.what, *self.columns)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def read_interactions(frame, what: str, names: dict, *, score: bool = False,
                      rating: bool = False) -> Interactions:
    """The rows of ``frame`` (the argument ``what``) under the column
    ``names`` (user, item, score, rating): ``score`` reads the scores,
    ``rating`` the ratings when the column is there (or was named)."""
    wanted = {"user": (names["user"], "user_col"), "item": (names["item"], "item_col")}
    if score:
        wanted["score"] = (names["score"], "score_col")
    if rating and names["rating"] is not None and (
            names["rating"] != "rating" or "rating" in column_names(frame)):
        wanted["rating"] = (names["rating"], "rating_col")
    columns = read_columns(frame, what, wanted)
    user = ids_of(columns["user"], what, names["user"])
    item = ids_of(columns["item"], what, names["item"])
    values = label = None
    if score:
        if "score" in columns:
            values = _scores(columns["score"], what, names["score"])
        else:
            values = -np.arange(user.shape[0], dtype=np.float64)
    if rating:
        label = (numbers_of(columns["rating"], what, names["rating"], finite=True)
                 if "rating" in columns else np.ones(user.shape[0]))
    return Interactions(what, user, item, values, label, (names["user"], names["item"]))


def _scores(values: np.ndarray, what: str, column: str) -> np.ndarray:
    """Scores as float64 in the same order: integers beyond 2**53, which float64
    would round into ties (2**60 and 2**60 + 1), are replaced by their ranks."""
    if values.dtype.kind in "iu" and values.shape[0] and (
            int(values.max()) > 2**53 or int(values.min()) < -2**53):
        return np.unique(values, return_inverse=True)[1].astype(np.float64)
    return numbers_of(values, what, column)


def check_kinds(frames: list[Interactions], catalog: np.ndarray | None = None) -> None:
    """Refuse user (or item) ids of different kinds across the frames."""
    same_kind({f"{f.what}'s {f.columns[0]!r}": f.user for f in frames})
    items = {f"{f.what}'s {f.columns[1]!r}": f.item for f in frames}
    if catalog is not None:
        items["catalog"] = catalog
    same_kind(items)


def catalog_ids(catalog) -> np.ndarray:
    """The item ids of ``catalog`` (array-like)."""
    values = np.asarray(list(catalog) if not hasattr(catalog, "__array__") else catalog)
    if values.ndim != 1:
        raise ValueError(f"catalog must be a 1-D list of item ids; got shape {values.shape}.")
    return ids_of(values if values.dtype.kind != "U" else values.astype(object), "catalog",
                  "catalog")
