"""Validated query ids in the forms the rest of the package asks for.

Callers outside the engine's inputs (:mod:`~sklearn_rank.metrics._engine.inputs`)
that take a ``qid`` argument validate it here, through
:func:`~sklearn_rank.metrics._engine.qid.qid_values`, and get the ids in the
form they work on. The interface: :func:`qid_array` (the ids themselves, one per
row: chunked and Dask evaluation concatenate them), :func:`query_codes` (the
sorted unique ids and every row's code: the scorers and the splitters),
:func:`group_rows` (the rows grouped by query, a
:class:`~sklearn_rank.metrics._engine.grouping.Grouping`: ``QueryRanker`` sorts
its rows with it) and :class:`RowIds` (a row's id looked up when a message
needs it: the inputs).
"""

from __future__ import annotations

import numpy as np

from .grouping import Grouping, QueryCodes, factorize, group
from .qid import qid_values

__all__ = ["RowIds", "group_rows", "qid_array", "query_codes"]


class RowIds:
    """The query id of each row, looked up in the sorted ids when asked (for
    messages) rather than copied out for every row."""

    __slots__ = ("codes", "labels")

    def __init__(self, codes: np.ndarray, labels: np.ndarray):
        self.codes, self.labels = codes, labels

    def __getitem__(self, row):
        return self.labels[self.codes[row]]


def qid_array(qid, name: str = "qid") -> np.ndarray:
    """Validated query ids as an array of the ids themselves (see
    :mod:`~sklearn_rank.metrics._engine.qid`).

    Ids coded against their sorted values come back as Python objects: one
    reference per row, never one fixed-width copy of a long id per row.
    """
    q, labels = qid_values(qid, name)
    return q if labels is None else labels.astype(object)[q]


def query_codes(qid, name: str = "qid") -> QueryCodes:
    """Validated query ids: the sorted unique ids and the code of every row."""
    q, labels = qid_values(qid, name)
    if q.shape[0] == 0:
        raise ValueError(f"{name} is empty; pass one query id per row.")
    if labels is not None:  # codes already are ranks among the sorted ids
        return QueryCodes(labels, q)
    return factorize(q)


def group_rows(qid, name: str = "qid") -> Grouping:
    """Validated query ids grouped
    (:func:`~sklearn_rank.metrics._engine.grouping.group`): the stable row
    order that makes queries contiguous (None if they are), and the first row
    and size of each query in that order."""
    q, _ = qid_values(qid, name)
    if q.shape[0] == 0:
        raise ValueError(f"{name} is empty; pass one query id per row.")
    return group(q)
