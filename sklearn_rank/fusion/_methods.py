"""Score normalisations and fusion methods, declared once.

Each normalisation maps one run's scores of one query to new scores (:data:`NORMS`); each
fusion method combines, for each retrieved (query, document) pair, the runs' normalised
scores, or ranks (:data:`METHODS`). Every definition is ranx's (``ranx.fuse``, whose
names are used); where ranx leaves a case to its data structures, the choice made here
is written beside the definition.

Its interface: :func:`ranks` (1-based ranks per query in trec_eval's tie order),
:func:`norm_name` and :func:`normalized` (a normalisation by name, and applied),
:func:`method_of` (a :class:`FusionMethod` by name), :class:`Groups` (the runs of rows of
one query) and :class:`NormError` (a normalisation undefined for a query).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["METHODS", "NORMS", "FusionMethod", "Groups", "NormError", "method_of", "norm_name",
           "normalized", "ranks"]


@dataclass(frozen=True)
class Groups:
    """Consecutive runs of equal query positions: their ``starts`` and ``sizes``."""

    starts: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, query: np.ndarray) -> Groups:
        """The groups of ``query`` (non-decreasing)."""
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else (
            np.zeros(0, dtype=np.intp))
        return cls(starts, np.diff(np.r_[starts, len(query)]))

    def spread(self, values: np.ndarray) -> np.ndarray:
        """Each group's value on each of its rows."""
        return np.repeat(values, self.sizes)

    def reduce(self, ufunc, values: np.ndarray) -> np.ndarray:
        """``ufunc`` reduced over each group."""
        return ufunc.reduceat(values, self.starts) if len(values) else values[:0]


def ranks(scores: np.ndarray, query: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """1-based rank of each score within its query (``query`` non-decreasing): by
    decreasing score, equal scores by decreasing ``tiebreak``."""
    order = np.lexsort((-tiebreak, -scores, query))
    groups = Groups.of(query)
    rank = np.empty(len(scores), dtype=np.float64)
    rank[order] = np.arange(len(scores)) - groups.spread(groups.starts) + 1
    return rank


def _safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator``, 0 where the denominator is 0 (all scores equal)."""
    zero = denominator == 0
    return np.where(zero, 0.0, numerator / np.where(zero, 1.0, denominator))


def _min_max(s, g, rank):
    low = g.spread(g.reduce(np.minimum, s))
    return _safe_ratio(s - low, g.spread(g.reduce(np.maximum, s)) - low)


def _max(s, g, rank):
    top = g.reduce(np.maximum, s)
    if (top <= 0).any():
        raise NormError("max", int(np.argmax(top <= 0)), float(top[np.argmax(top <= 0)]))
    return s / g.spread(top)


def _sum(s, g, rank):
    shifted = s - g.spread(g.reduce(np.minimum, s))
    return _safe_ratio(shifted, g.spread(g.reduce(np.add, shifted)))


def _zmuv(s, g, rank):
    mean = g.reduce(np.add, s) / g.sizes
    centred = s - g.spread(mean)
    std = np.sqrt(g.reduce(np.add, centred * centred) / g.sizes)
    return _safe_ratio(centred, g.spread(std))


def _rank(s, g, rank):
    return 1.0 - (rank - 1.0) / g.spread(g.sizes)


class NormError(ValueError):
    """A normalisation undefined for one query: ``group`` is its position among the run's
    queries; the caller names the run and the query."""

    def __init__(self, norm: str, group: int, value: float):
        self.norm, self.group, self.value = norm, group, value
        super().__init__(norm)


#: name -> (function of (scores, groups, ranks), definition); the scores of one run.
NORMS: dict[str, tuple[Callable, str]] = {
    "min-max": (_min_max, "(s - min) / (max - min); 0 when all scores of the query are equal"),
    "max": (_max, "s / max; the maximum must be > 0"),
    "sum": (_sum, "(s - min) / sum(s - min); 0 when all scores of the query are equal"),
    "zmuv": (_zmuv, "(s - mean) / std (population std, ddof=0); 0 when all are equal"),
    "rank": (_rank, "1 - (rank - 1) / n, rank 1 the top document, n the run's documents"),
}
_NORM_ALIASES = {"min_max": "min-max", "minmax": "min-max", "z-score": "zmuv",
                 "zscore": "zmuv", "z_score": "zmuv"}


def norm_name(norm: str | None) -> str | None:
    """The canonical name of a normalisation (``"z-score"`` is ``"zmuv"``)."""
    if norm is None:
        return None
    name = _NORM_ALIASES.get(norm.lower(), norm.lower())
    if name not in NORMS:
        raise ValueError(f"norm={norm!r} is not a normalisation; use one of "
                         f"{', '.join(map(repr, NORMS))}, 'z-score' (= 'zmuv') or None.")
    return name


def normalized(norm: str | None, scores: np.ndarray, query: np.ndarray,
               rank: np.ndarray) -> np.ndarray:
    """One run's ``scores`` (``query`` non-decreasing, ``rank`` from :func:`ranks`)
    normalised by ``norm`` query by query."""
    if norm is None:
        return scores
    return NORMS[norm][0](scores, Groups.of(query), rank)


@dataclass(frozen=True)
class FusionMethod:
    """A fusion method: ``combine(values, weights)`` of the runs' values of each pair
    (``values`` of shape (n_pairs, n_runs), NaN where a run did not retrieve the pair;
    ``weights`` of shape (n_runs,)) gives the fused score. ``on_ranks``: the values are
    the ranks (the normalisation does not apply). ``weighted``: it takes ``weights``."""

    name: str
    combine: Callable
    definition: str
    weighted: bool = False
    on_ranks: bool = False


def _present(values):
    return (~np.isnan(values)).sum(axis=1)


def _nansum(values):
    return np.nansum(values, axis=1)


def _rrf(k):
    def combine(rank, weights):
        return np.nansum(weights / (k + rank), axis=1)
    return combine


METHODS: dict[str, FusionMethod] = {m.name: m for m in [
    FusionMethod("rrf", None, "sum of w / (k + rank) over the runs that retrieve the "
                 "document (Cormack et al., 2009; weighted when weights are given)",
                 weighted=True, on_ranks=True),
    FusionMethod("sum", lambda v, w: _nansum(v), "CombSUM: sum of the scores"),
    FusionMethod("mnz", lambda v, w: _nansum(v) * _present(v),
                 "CombMNZ: sum of the scores x number of runs that retrieve the document"),
    FusionMethod("max", lambda v, w: np.nanmax(v, axis=1), "CombMAX: largest score"),
    FusionMethod("min", lambda v, w: np.nanmin(v, axis=1), "CombMIN: smallest score"),
    FusionMethod("med", lambda v, w: np.nanmedian(v, axis=1), "CombMED: median score"),
    FusionMethod("anz", lambda v, w: _nansum(v) / _present(v),
                 "CombANZ: sum of the scores / number of runs that retrieve the document"),
    FusionMethod("wsum", lambda v, w: np.nansum(v * w, axis=1),
                 "weighted sum of the scores (a missing score counts 0)", weighted=True),
    FusionMethod("wmnz", lambda v, w: _nansum(v) * np.nansum(np.where(np.isnan(v), np.nan, w),
                                                            axis=1),
                 "weighted MNZ (Wu & Crestani, 2002): sum of the scores x sum of the weights "
                 "of the runs that retrieve the document", weighted=True),
]}
_METHOD_ALIASES = {"combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min",
                   "combmed": "med", "combanz": "anz", "weighted_sum": "wsum"}


def method_of(method: str, k: float) -> FusionMethod:
    """The :class:`FusionMethod` called ``method`` (ranx's names; ``"CombSUM"`` or
    ``"comb_sum"`` are ``"sum"``), RRF with its ``k``."""
    key = method.lower().replace("comb_", "comb")
    name = _METHOD_ALIASES.get(key, key)
    if name not in METHODS:
        raise ValueError(f"method={method!r} is not a fusion method; use one of "
                         f"{', '.join(map(repr, METHODS))} (ranx's names; 'CombSUM' or "
                         "'comb_sum' also name 'sum').")
    found = METHODS[name]
    if name == "rrf":
        return FusionMethod("rrf", _rrf(k), found.definition, weighted=True, on_ranks=True)
    return found
