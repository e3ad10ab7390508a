"""The runs given to :func:`~sklearn_rank.fusion.fuse`, laid out side by side.

Runs come as :class:`~sklearn_rank.trec.Run` tables (or what makes one: a DataFrame in
PyTerrier's or ir_measures' layout, a ``{qid: {docno: score}}`` dict, a run file), or as
flat rows: arrays of scores of the same rows, with their query ids in ``qid=`` (several
models' predictions on one test set). Either way they become a :class:`Stack`: one row
per (query, document) pair that any run retrieves, one column per run, ``NaN`` where a
run did not retrieve the document.

Its interface: :func:`stacked` (the runs to a :class:`Stack`) and :class:`Stack`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..trec import Run, read_run
from ..trec._column import ID_ERRORS, IdColumn
from ..trec._evaluate import as_table
from ..trec._frames import is_frame

__all__ = ["Stack", "stacked"]


@dataclass(frozen=True)
class Stack:
    """Runs side by side.

    Attributes
    ----------
    names : list of str
        Each run's name (its tag, or its key in the mapping that gave it).
    query : ndarray of int of shape (n_pairs,)
        Each pair's query, as a position in ``qids``; pairs are ordered by query.
    qids : ndarray
        The distinct query ids, sorted: bytes for tables, the values of ``qid=`` for
        flat rows.
    docno : ndarray or None
        Each pair's document id as bytes (tables), None for flat rows.
    tiebreak : ndarray of int of shape (n_pairs,)
        Among equal scores of a query, the larger ranks first: trec_eval's order
        (decreasing document id) for tables, the order of the rows for flat rows.
    scores : ndarray of float of shape (n_pairs, n_runs)
        Each run's score of each pair, NaN where the run did not retrieve it.
    rows : ndarray of int or None
        For flat rows, the row of each pair (the pairs are the rows, reordered).
    """

    names: list
    query: np.ndarray
    qids: np.ndarray
    docno: np.ndarray | None
    tiebreak: np.ndarray
    scores: np.ndarray
    rows: np.ndarray | None = None

    def qid_text(self, i: int) -> str:
        """The id of query ``i`` (a position in :attr:`qids`) as text: tables' ids are
        bytes, decoded as :class:`~sklearn_rank.trec.Run` decodes them."""
        qid = self.qids[i]
        return qid.decode("utf-8", ID_ERRORS) if isinstance(qid, bytes) else str(qid)


def _named(runs) -> list[tuple[str | None, object]]:
    if isinstance(runs, Mapping):
        return [(str(name), run) for name, run in runs.items()]
    if isinstance(runs, str | os.PathLike) or is_frame(runs) or isinstance(runs, Run):
        raise TypeError("runs must be a list of runs (or a {name: run} dict), not a single "
                        f"{type(runs).__name__}: fusion combines two runs or more.")
    try:
        return [(None, run) for run in runs]
    except TypeError:
        raise TypeError("runs must be a list of runs or a {name: run} dict; got "
                        f"{type(runs).__name__}.") from None


def _is_flat(run) -> bool:
    return not (isinstance(run, Run | Mapping | str | os.PathLike) or is_frame(run)
                or hasattr(run, "read"))


def stacked(runs, qid=None, *, flat: bool = False) -> Stack:
    """The :class:`Stack` of ``runs``: tables (:func:`~sklearn_rank.fusion.fuse`), or
    with ``flat=True`` arrays of scores of the rows whose query ids are ``qid``
    (:func:`~sklearn_rank.fusion.fuse_scores`)."""
    named = _named(runs)
    who = "fuse_scores" if flat else "fuse"
    if len(named) < 2:
        raise ValueError(f"{who} needs two runs or more; got {len(named)}.")
    if flat:
        if not all(_is_flat(run) for _, run in named):
            raise TypeError("fuse_scores takes arrays of scores (one per row, with qid=); "
                            "fuse Run tables, DataFrames, dicts or files with fuse().")
        return _stacked_rows(named, qid)
    if any(_is_flat(run) for _, run in named):
        raise TypeError("fuse takes Run tables, DataFrames, {qid: {docno: score}} dicts or "
                        "run files; fuse arrays of scores of the same rows with "
                        "fuse_scores(runs, qid=qid).")
    tables = []
    for i, (name, run) in enumerate(named):
        table = as_table(run, Run, read_run, f"runs[{name or i}]")
        tables.append((name or table.name, table))
    return _stacked_tables(tables)


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out


def _id_bytes(column: IdColumn) -> np.ndarray:
    """A table's ids as bytes, which order them as trec_eval does (``strcmp``): a
    fixed-width array, sorted in C, or for a column with a few very long ids an object
    array of ``bytes`` (each id is padded to the longest in a fixed-width array)."""
    if not len(column):
        return np.empty(0, dtype="S1")
    if column.compact:
        return column.fixed()
    ids = np.empty(len(column), dtype=object)
    ids[:] = column.items()
    return ids


def _stacked_tables(tables: list[tuple[str, Run]]) -> Stack:
    qid_text = np.concatenate([_id_bytes(t.qid_bytes) for _, t in tables])
    doc_text = np.concatenate([_id_bytes(t.docno_bytes) for _, t in tables])
    qids, q_code = np.unique(qid_text, return_inverse=True)
    docnos, d_code = np.unique(doc_text, return_inverse=True)
    pair = q_code.astype(np.int64) * len(docnos) + d_code  # < 2**63: ids are distinct strings
    keys, pair_code = np.unique(pair, return_inverse=True)  # sorted by query, then docno
    scores = np.full((len(keys), len(tables)), np.nan)
    at = 0
    for j, (_, table) in enumerate(tables):
        scores[pair_code[at:at + len(table)], j] = table.score
        at += len(table)
    query, doc = np.divmod(keys, len(docnos))
    return Stack(names=_unique_names([name for name, _ in tables]), query=query,
                 qids=qids, docno=docnos[doc], tiebreak=doc,
                 scores=scores)


def _stacked_rows(named: list, qid) -> Stack:
    if qid is None:
        raise ValueError("runs given as arrays of scores (flat rows) need their query ids: "
                         "pass qid= (one id per row), or give Run tables or DataFrames.")
    columns = []
    for i, (name, run) in enumerate(named):
        try:
            values = np.asarray(run, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"runs[{name or i}] must hold numbers (a run's scores, one per "
                             "row).") from None
        if values.ndim != 1:
            raise ValueError(f"runs[{name or i}] must be 1-D (one score per row); got shape "
                             f"{values.shape}.")
        if not np.isfinite(values).all():
            raise ValueError(f"runs[{name or i}] holds a score that is not a finite number "
                             f"(row {int(np.argmax(~np.isfinite(values)))}).")
        columns.append(values)
    qid = np.asarray(qid)
    lengths = {len(c) for c in columns} | {len(qid)}
    if qid.ndim != 1 or len(lengths) != 1:
        raise ValueError("the runs' score arrays and qid must be 1-D and of one length; got "
                         f"lengths {[len(c) for c in columns]} and qid {qid.shape}.")
    qids, q_code = np.unique(qid, return_inverse=True)
    rows = np.argsort(q_code, kind="stable")
    names = [name or f"run_{i}" for i, (name, _) in enumerate(named)]
    return Stack(names=_unique_names(names), query=q_code[rows], qids=qids, docno=None,
                 tiebreak=-rows, scores=np.column_stack(columns)[rows], rows=rows)
