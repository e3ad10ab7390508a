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
