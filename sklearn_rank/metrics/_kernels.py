"""Per-block metric kernels, gains and discounts.

A kernel takes a :class:`~sklearn_rank.metrics._engine.Ranking` (one block of
ranked queries), the metric's resolved options and its cut-off ``k``, and
returns ``(values, empty)``: one value per query of the block and a mask of the
queries the metric cannot judge (no relevant document). The empty-query policy
and the averaging over queries are applied later, once, by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

__all__ = ["gain_column", "check_labels", "discount_vector", "KERNELS"]

_MAX_EXP_LABEL = 1024  # 2.0 ** 1024 overflows float64


# --------------------------------------------------------------------------
# Gains
# --------------------------------------------------------------------------


def _exponential(labels):
    gains = np.exp2(labels)
    gains -= 1.0
    return gains


def _linear(labels):
    return labels


def _lookup(table: np.ndarray):
    def gain(labels):
        return table[labels.astype(np.intp)]

    return gain


def _mapping(keys: np.ndarray, values: np.ndarray):
    def gain(labels):
        return values[np.searchsorted(keys, labels)]

    return gain


def gain_column(gain):
    """``(key, func)``: a hashable cache key and the vectorised label -> gain map."""
    if isinstance(gain, str):
        return ("gain", gain), _exponential if gain == "exponential" else _linear
    if callable(gain):
        return ("gain", gain), gain
    if isinstance(gain, Mapping) or _is_pairs(gain):
        items = sorted(dict(gain).items())
        keys = np.array([k for k, _ in items], dtype=np.float64)
        values = np.array([v for _, v in items], dtype=np.float64)
        return ("gain", tuple(items)), _mapping(keys, values)
    table = np.asarray(gain, dtype=np.float64)
    return ("gain", tuple(table.tolist())), _lookup(table)


def _is_pairs(gain) -> bool:
    """A mapping frozen into a tuple of (label, gain) pairs by the spec."""
    return (isinstance(gain, tuple) and len(gain) > 0
            and all(isinstance(p, tuple) and len(p) == 2 for p in gain))


def check_labels(data, gain, metric: str) -> None:
    """Check that every label has a finite non-negative gain under ``gain``."""
    labels = data.labels
    lo = labels.min()
    if lo < 0:
        bad = labels < 0
        raise ValueError(
            f"y_true has {int(bad.sum())} negative label(s) (first in query "
            f"{data.first_qid(bad)!r}); {metric} needs relevance labels >= 0 "
            "(negative gains break 0 <= NDCG <= 1). Clip or shift the labels."
        )
    if isinstance(gain, str):
        if gain == "exponential" and labels.max() >= _MAX_EXP_LABEL:
            bad = labels >= _MAX_EXP_LABEL
            raise ValueError(
                f"y_true has {int(bad.sum())} label(s) >= {_MAX_EXP_LABEL} (first in "
                f"query {data.first_qid(bad)!r}), whose exponential gain 2**label - 1 "
                "overflows float64; use gain='linear' or a label -> gain mapping."
            )
        return
    if callable(gain):
        key, func = gain_column(gain)
        values = np.asarray(func(labels.copy()), dtype=np.float64)
        if values.shape != labels.shape:
            raise ValueError(
                f"gain callable must return one gain per label (an array of shape "
                f"{labels.shape}), got shape {values.shape}."
            )
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            raise ValueError(
                f"gain callable returned {int(bad.sum())} negative, NaN or infinite "
                f"gain(s) (first in query {data.first_qid(bad)!r}); gains must be "
                "finite and >= 0."
            )
        data._columns[key] = values
        return
    if isinstance(gain, Mapping) or _is_pairs(gain):
        table = dict(gain)
        keys = np.array(sorted(table), dtype=np.float64)
        missing = ~np.isin(labels, keys)
        if missing.any():
            raise ValueError(
                f"y_true has {int(missing.sum())} label(s) with no entry in the gain "
                f"mapping (first in query {data.first_qid(missing)!r}, label "
                f"{labels[missing][0]:g}); add them to the mapping."
            )
        values = np.array([table[k] for k in sorted(table)], dtype=np.float64)
        _check_gain_values(values)
        return
    table = np.asarray(gain, dtype=np.float64)
    _check_gain_values(table)
    bad = (labels != np.floor(labels)) | (labels >= table.shape[0])
    if bad.any():
        raise ValueError(
            f"y_true has {int(bad.sum())} label(s) that are not integers below "
            f"len(gain) = {table.shape[0]} (first in query {data.first_qid(bad)!r}); "
            "a gain array maps label i to gain[i], like LightGBM's label_gain."
        )


def _check_gain_values(values: np.ndarray) -> None:
    if values.ndim != 1 or not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(
            "gain must map labels to finite gains >= 0; got "
            f"{np.array2string(values, threshold=8)}."
        )


# --------------------------------------------------------------------------
# Discounts
# --------------------------------------------------------------------------


def discount_vector(discount, log_base: float, size: int) -> np.ndarray:
    """Discount of ranks 1..size."""
    ranks = np.arange(1, size + 1, dtype=np.float64)
    if isinstance(discount, str):
        if discount == "log2":
            # 1 / log_b(r + 1); b = 2 is the standard discount.
            return np.log(log_base) / np.log1p(ranks)
        # Järvelin & Kekäläinen (2002): 1 / max(1, log_b r).
        return 1.0 / np.maximum(1.0, np.log(ranks) / np.log(log_base))
    if callable(discount):
        values = np.asarray(discount(ranks), dtype=np.float64)
        if values.shape != ranks.shape or not np.isfinite(values).all() or (values < 0).any():
            raise ValueError(
                "discount callable must return finite discounts >= 0, one per rank "
                f"(called with ranks 1..{size}); got {np.array2string(values, threshold=8)}."
            )
        return values
    values = np.asarray(discount, dtype=np.float64)
    if values.ndim != 1 or not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(
            "discount array must be 1-D with finite discounts >= 0 (discount[r - 1] "
            "for rank r)."
        )
    if values.shape[0] < size:
        raise ValueError(
            f"discount array has {values.shape[0]} values but ranks up to {size} are "
            f"needed; pass k <= {values.shape[0]} or a longer array."
        )
    return values[:size]


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


def _ideal(rank, key, func) -> np.ndarray:
    """Gains of each query sorted descending (the ideal ranking)."""
    ideal = rank._cache.get(("ideal", key))
    if ideal is None:
        ideal = np.sort(rank.unranked(key, func), axis=1)[:, ::-1]
        rank._cache[("ideal", key)] = ideal
    return ideal


def _cut(rank, k) -> int:
    return rank.width if k is None else min(k, rank.width)


def _discounted(rank, p, k):
    key, func = gain_column(p["gain"])
    kk = _cut(rank, k)
    d = discount_vector(p["discount"], p["log_base"], kk)
    dcg = rank.expected(key, func, kk) @ d
    ideal = _ideal(rank, key, func)
    idcg = ideal[:, :kk] @ d
    return dcg, idcg, ideal[:, 0] <= 0


def _cg(rank, p, k):
    key, func = gain_column(p["gain"])
    cg = rank.expected(key, func, _cut(rank, k)).sum(axis=1)
    return cg, _ideal(rank, key, func)[:, 0] <= 0


def _dcg(rank, p, k):
    dcg, _, empty = _discounted(rank, p, k)
    return dcg, empty


def _ndcg(rank, p, k):
    dcg, idcg, empty = _discounted(rank, p, k)
    empty = empty | (idcg <= 0)
    return np.divide(dcg, idcg, out=np.zeros_like(dcg), where=~empty), empty


KERNELS: dict[str, Callable] = {"cg": _cg, "dcg": _dcg, "ndcg": _ndcg}
