"""Runs of equal consecutive values: the grouping of query ids
(:mod:`sklearn_rank.metrics._engine.grouping`) and the TREC tables share them.

A module of its own, so that reading a TREC file does not import the metrics
package.
"""

from __future__ import annotations

import numpy as np

__all__ = ["runs_at", "runs_of"]


def runs_of(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of equal consecutive ids (none without ids)."""
    return runs_at(ids[1:] != ids[:-1], ids.shape[0])


def runs_at(changes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of ``n`` values, ``changes[i]`` telling
    whether value i + 1 differs from value i."""
    starts = np.flatnonzero(changes) + 1
    if n:
        starts = np.concatenate(([0], starts))
    return starts, np.diff(np.append(starts, n))
