"""The C/W/L engine: gains, continuation probabilities, expected utility.

A C/W/L user reads the ranking from the top and goes on from rank i to i + 1
with the continuation probability C_i; the weight of rank i is W_i =
prod_{j<i} C_j / sum_{m<=N} prod_{j<m} C_j and the metric is sum_i W_i g_i
over N = ``depth`` ranks. :mod:`~sklearn_rank.metrics._families.cwl` declares the metrics; this
module computes them on :class:`~sklearn_rank.metrics._engine.blocks.Ranking` blocks, with the
C/W/L
options (declared here) and, under ``ties="average"``, the exact expectation
over tie orderings (through :meth:`~sklearn_rank.metrics._engine.blocks.Ranking.expected` where the
weights do not depend on the gains, by enumeration otherwise).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..._utils.validation import Interval
from .._engine.columns import JUDGED, Column, CwlGain, Relevant
from .._vocab.params import Param, declare

__all__ = ["DEPTH", "BestCase", "cwl_kernel"]

#: cwl_eval's depth: the ranks a C/W/L user may read.
DEPTH = 1000
#: Largest depth (the weights of every rank are computed).
MAX_DEPTH = 100_000
_MAX_ORDERINGS = 40320

declare(Param("min_rel", 0.0, (Interval(Real, None, None, closed="neither"),), """\
min_rel : float, default=0
    Labels <= min_rel gain 0 (C/W/L graded gain, ir_measures' ``min_rel``)."""))
declare(Param("max_rel", 4.0, (Interval(Real, None, None, closed="neither"),), """\
max_rel : float, default=4
    Labels >= max_rel gain 1; between, the gain is (l - min_rel) / (max_rel -
    min_rel) (ir_measures' ``max_rel``, which it requires). Must exceed min_rel."""))
declare(Param("depth", DEPTH, (Interval(Integral, 1, MAX_DEPTH, closed="both"),), """\
depth : int, default=1000
    The ranks the C/W/L user may read, at most 100,000: the weights are
    normalised over ranks 1..depth (cwl_eval's 1000; ir_measures' cut-off of ``SDCG@k``,
    ``NERR8@k``, ``NERR9@k`` and ``BPM@k``). Unlike a cut-off k, it changes
    the normalisation: ranks a list lacks gain 0."""))
declare(Param("residual", False, ("boolean",), """\
residual : bool, default=False
    Return the C/W/L residual instead of the value: the value with every
    unjudged document and every rank the list lacks (up to ``depth``) at
    gain 1 (the best case), minus the value (cwl_eval's residual; for RBP,
    Moffat & Zobel's). 0 when every document read is judged."""))
declare(Param("target", 1.0, (Interval(Real, 0, None, closed="neither"),), """\
target : float, default=1
    T, the gain the user wants (INST, INSQ, NERR11, BPM: ir_measures' ``T``)."""))


@dataclass(frozen=True)
class BestCase(Column):
    """A gain column with unjudged documents at gain 1 (C/W/L's best case)."""

    gain: Column
    per_row: ClassVar[bool] = False  # (no values of its own: a block makes it)

    def block(self, ranking):
        out = ranking.unranked(self.gain)
        if ranking.has_judgments:
            out = np.where(ranking.unranked(JUDGED) > 0, out, 1.0)
            if ranking.padding is not None:
                np.copyto(out, 0.0, where=ranking.padding)
        return out


# -- continuation probabilities: (gains (q, n), options, ranks 1..n) -> C (q, n) --------

def _square_ratio(i, shift):
    return ((i + shift - 1) / (i + shift)) ** 2


_CONTINUE = {
    "cwl_rbp": lambda g, o, i: np.full(g.shape, o["p"]),
    "sdcg": lambda g, o, i: np.broadcast_to(np.log2(i + 1) / np.log2(i + 2), g.shape),
    "insq": lambda g, o, i: np.broadcast_to(_square_ratio(i, 2 * o["target"]), g.shape),
    "nerr8": lambda g, o, i: 1.0 - g,
    "nerr9": lambda g, o, i: i / (i + 1) * (1.0 - g),
    "nerr10": lambda g, o, i: o["p"] * (1.0 - g),
    "nerr11": lambda g, o, i: _square_ratio(i, 2 * o["target"]) * (1.0 - g),
    "inst": lambda g, o, i: _square_ratio(i, 2 * o["target"] - np.cumsum(g, axis=1)),
    "bpm": lambda g, o, i: (np.cumsum(g, axis=1) < o["target"]).astype(np.float64),
}
#: Metrics whose weights do not depend on the gains: exact under ties="average".
_LINEAR = {"cwl_rbp", "sdcg", "insq"}


def _utility(name: str, gains: np.ndarray, options) -> np.ndarray:
    """sum_i W_i g_i of each row of ``gains`` (q, N)."""
    ranks = np.arange(1, gains.shape[1] + 1, dtype=np.float64)
    go_on = _CONTINUE[name](gains, options, ranks)
    reach = np.ones_like(gains)
    np.cumprod(go_on[:, :-1], axis=1, out=reach[:, 1:])
    return (reach * gains).sum(axis=1) / reach.sum(axis=1)


def _distinct_orderings(values: np.ndarray) -> int:
    """n! / prod(count!) over the distinct values: the distinct orderings."""
    _, counts = np.unique(values, return_counts=True)
    return math.factorial(values.shape[0]) // math.prod(math.factorial(int(c)) for c in counts)


def _tie_average(name, rank, col, depth, options, fill=0.0) -> np.ndarray:
    """The mean over the distinct orderings of tied documents, enumerated."""
    values = []
    ranked = rank.ranked(col)
    for t, row in enumerate(rank.tie_rows):
        n = int(rank.lengths[row] if rank.retrieved is None else rank.retrieved[row])
        cells = ranked[row, :n]
        breaks = np.flatnonzero(~rank.same[t, :max(n - 1, 0)]) + 1
        parts = np.split(cells, breaks)
        total = math.prod(_distinct_orderings(part) for part in parts)
        if total > _MAX_ORDERINGS:
            raise ValueError(
                f"{name} under ties='average' enumerates the orderings of tied documents; "
                f"a query has {total} (at most "
                f"{_MAX_ORDERINGS}). Pass ties='stable', 'pessimistic' or 'optimistic'.")
        groups = [sorted(set(itertools.permutations(part.tolist()))) for part in parts]
        seqs = np.full((total, depth), fill)
        for j, combo in enumerate(itertools.product(*groups)):
            flat = np.concatenate(combo)[:depth]
            seqs[j, :flat.shape[0]] = flat
        values.append(_utility(name, seqs, options).mean())
    return np.array(values)


def _expected_utility(name, col, rank, options, fill: float) -> np.ndarray:
    """sum_i W_i g_i of each query; ranks the list lacks, up to depth, gain ``fill``."""
    depth = int(options["depth"])
    width = min(rank.width, depth)
    gains = rank.expected(col, width) if name in _LINEAR else rank.ranked(col, width)
    n = rank.lengths if rank.retrieved is None else rank.retrieved
    q = gains.shape[0]
    out = np.empty(q)
    step = max(1, (1 << 18) // depth)
    for lo in range(0, q, step):
        part = np.zeros((min(step, q - lo), depth))
        part[:, :width] = gains[lo:lo + step]
        if fill:
            part[np.arange(depth) >= n[lo:lo + step, None]] = fill
        out[lo:lo + step] = _utility(name, part, options)
    if rank.tied and name not in _LINEAR:
        out[rank.tie_rows] = _tie_average(name, rank, col, depth, options, fill)
    return out


def _cwl(name, col, rank, options):
    value = _expected_utility(name, col, rank, options, 0.0)
    if not options["residual"]:
        return value, rank.count(col) == 0
    best = _expected_utility(name, BestCase(col), rank, options, 1.0)
    return np.maximum(best - value, 0.0), np.zeros(value.shape, dtype=bool)


def cwl_kernel(name):
    def kernel(rank, options, k):
        col = (Relevant(options["threshold"]) if name == "cwl_rbp"
               else CwlGain(float(options["min_rel"]), float(options["max_rel"])))
        return _cwl(name, col, rank, options)

    kernel.__name__ = f"_{name}"
    return kernel
