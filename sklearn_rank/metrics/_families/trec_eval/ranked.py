"""trec_eval's rankings of the evaluated queries, laid out flat.

Each query's retrieved documents in trec_eval's rank order (decreasing score, ties by
decreasing docno, cut at ``-M``, without unjudged documents under ``-J``), as relevance
codes: a level >= 0, :data:`NONPOOL` (-1: not in the qrels) or :data:`UNJUDGED` (-2: a
negative qrels level, "pooled, not judged"). :func:`sklearn_rank.trec._trec_eval.rankings.ranked`
builds it from qrels and a run, :mod:`sklearn_rank.metrics._trec_flat` from flat rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._engine.data import Data, ranked_data

__all__ = ["NONPOOL", "UNJUDGED", "Ranked"]

NONPOOL = -1
UNJUDGED = -2


@dataclass
class Ranked:
    """Every evaluated query's ranking, flat.

    ``rel[offsets[i]:offsets[i + 1]]`` are query ``i``'s codes in rank order;
    ``levels[i, k]`` counts its qrels lines of level ``k >= 0``; ``top[i]`` is
    its highest qrels level (negative ones included); ``missing[i]`` marks a
    query the run lacks (``-c``); ``rel_gt0`` counts every query's qrels
    lines of level > 0 (trec_eval's ``-c`` num_rel summary).
    """

    qids: list
    rel: np.ndarray
    offsets: np.ndarray
    levels: np.ndarray
    top: np.ndarray
    missing: np.ndarray
    runid: str
    rel_gt0: int
    complete: bool = False
    unleveled: np.ndarray | None = None  # no qrels level >= 0: counts are stale

    @property
    def n(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def query(self) -> np.ndarray:
        """The query index of every row."""
        return np.repeat(np.arange(self.n_queries), self.n)

    @property
    def position(self) -> np.ndarray:
        """The 0-based rank of every row in its query."""
        return np.arange(self.rel.shape[0]) - np.repeat(self.offsets[:-1], self.n)

    def as_data(self, codes: bool = False, trec_levels: bool = False) -> Data:
        """The rankings as the registry's ranked rows
        (:func:`~sklearn_rank.metrics._engine.data.ranked_data`), for its kernels.

        Each query holds its retrieved documents in rank order (label
        ``max(code, 0)``, judged when the code is >= 0), then one row for each
        judged document of a level >= 0 it did not retrieve (which count for R
        and the ideal ranking; their identity does not matter), or one
        unjudged placeholder when it has no row at all. No scores: the order
        is trec_eval's, with no ties left. With ``codes``, the data also holds
        every row's relevance code (:attr:`Data.codes`: a negative ``-l``, gain
        pairs); with ``trec_levels``, trec_eval's level counts (:attr:`Data.trec_levels`:
        gain pairs).
        """
        nq = self.n_queries
        levels = self.levels
        if self.unleveled is not None and self.unleveled.any():
            levels = levels.copy()
            levels[self.unleveled] = 0  # stale counts: the query has no level >= 0
        width = levels.shape[1]
        n, rel = self.n, self.rel
        # the retrieved documents of each (query, level): the judged rows' (few)
        judged = np.flatnonzero(rel >= 0)
        key = np.searchsorted(self.offsets, judged, side="right") - 1
        key *= width
        key += rel[judged]
        retrieved = np.bincount(key, minlength=nq * width).reshape(nq, width)
        missed = np.maximum(levels - retrieved, 0)
        n_missed = missed.sum(axis=1)
        lengths = n + n_missed
        placeholder = lengths == 0
        lengths = lengths + placeholder
        starts = np.cumsum(lengths) - lengths
        # every row's code: the retrieved rows', then each query's missed documents' levels
        missed_levels = np.repeat(np.tile(np.arange(width, dtype=rel.dtype), nq), missed.ravel())
        first = np.repeat(starts + n - (np.cumsum(n_missed) - n_missed), n_missed)
        at_missed = first + np.arange(missed_levels.shape[0])
        retrieved_row = np.ones(int(lengths.sum()), dtype=bool)
        retrieved_row[at_missed] = False
        retrieved_row[starts[placeholder]] = False
        code = np.full(retrieved_row.shape[0], UNJUDGED, dtype=rel.dtype)  # (placeholders)
        code[retrieved_row] = rel
        code[at_missed] = missed_levels
        labels = np.maximum(code, 0, dtype=np.float64)
        flags = code >= 0
        row_codes = None
        if codes:
            row_codes = code.astype(np.float64)
            row_codes[starts[placeholder]] = -np.inf  # (no document: never relevant)
        return ranked_data(labels, lengths, np.asarray(self.qids, dtype=object),
                           n_retrieved=n, judged=flags, codes=row_codes,
                           trec_levels=(self.levels, self.top) if trec_levels else None)
