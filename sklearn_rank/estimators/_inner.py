"""What QueryRanker's inner model takes: its query arguments, labels and eval sets.

LightGBM takes group sizes (``group``, ``eval_group``), XGBoost sorted query
ids (``qid``, ``eval_qid``) and one weight per query, a pointwise regressor
nothing about queries. Which one a model is, is read from its ``fit``
signature (:func:`fit_kind`).
"""

from __future__ import annotations

import inspect

import numpy as np

__all__ = ["check_labels", "eval_arguments", "fit_kind", "query_arguments",
           "refuse_query_arguments"]

# LightGBM's default label_gain has 31 entries: labels 0..30.
LIGHTGBM_MAX_LABELS = 31
# XGBoost's exponential NDCG gain accepts relevance degrees below 32.
XGBOOST_MAX_LABELS = 32


def fit_params(estimator) -> set:
    """The names of the parameters of ``estimator.fit``."""
    try:
        return set(inspect.signature(estimator.fit).parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins without signatures
        return set()


def fit_kind(estimator) -> str:
    """How the inner model takes queries: 'qid' (XGBoost), 'group' (LightGBM) or 'none'."""
    params = fit_params(estimator)
    if "qid" in params:
        return "qid"
    if "group" in params:
        return "group"
    return "none"


def refuse_query_arguments(fit_params: dict) -> None:
    """Refuse the inner model's own query arguments among ``**fit_params``:
    QueryRanker builds them from per-row query ids."""
    for name in ("group", "eval_group"):
        if name in fit_params:
            raise ValueError(
                f"QueryRanker builds {name} from query ids; pass "
                f"{'qid' if name == 'group' else 'eval_qid'}=<one query id per row> "
                f"instead of {name}=."
            )
    if "eval_X" in fit_params or "eval_y" in fit_params:
        raise ValueError(
            "Pass validation data to QueryRanker as eval_set=[(X, y), ...] with "
            "eval_qid=[qid, ...]; it sorts them by query and hands them to the inner "
            "model in the form it takes (eval_X / eval_y for LightGBM >= 4.7)."
        )


def check_labels(y: np.ndarray, kind: str, estimator) -> np.ndarray:
    """Labels the inner model's objective takes: real numbers, and for a ranking
    objective non-negative integers below its limit (int64 when given as floats)."""
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per row), got shape {y.shape}.")
    if y.dtype.kind not in "iufb":
        raise ValueError(
            f"Unknown label type: y has dtype {y.dtype}; pass numeric relevance labels.")
    if kind == "none":
        return y
    if not np.isfinite(y).all():
        raise ValueError(
            "y must hold finite numeric relevance labels for a ranking objective.")
    bad = (y < 0) | (y != np.floor(y))
    if bad.any():
        raise ValueError(
            f"y has {int(bad.sum())} label(s) that are not non-negative integers (first: "
            f"{y[bad][0]!r}); {type(estimator).__name__}'s ranking objective "
            "needs graded relevance labels 0, 1, 2, ..."
        )
    _check_label_range(y, kind, estimator)
    return y.astype(np.int64) if y.dtype.kind == "f" else y


def _check_label_range(y: np.ndarray, kind: str, estimator) -> None:
    if kind == "group":
        label_gain = estimator.get_params().get("label_gain")
        limit = LIGHTGBM_MAX_LABELS if label_gain is None else len(label_gain)
        if y.max() >= limit:
            raise ValueError(
                f"y has labels up to {int(y.max())}, but LightGBM's ranking objective "
                f"takes labels below len(label_gain) = {limit}; pass "
                "estimator__label_gain=[...] with one gain per label, or map the labels "
                "to 0..30."
            )
    elif y.max() >= XGBOOST_MAX_LABELS:
        raise ValueError(
            f"y has labels up to {int(y.max())}, but XGBoost's exponential NDCG gain "
            f"takes labels below {XGBOOST_MAX_LABELS}; map the labels to 0..31 or set "
            "estimator__ndcg_exp_gain=False."
        )


def query_arguments(kind: str, starts: np.ndarray, sizes: np.ndarray, sample_weight):
    """``(sample_weight, extra)`` for rows sorted by query: the weights as the inner
    model takes them, and its query argument (``group`` sizes or sorted ``qid``)."""
    if kind == "group":
        return sample_weight, {"group": sizes}
    if kind == "qid":
        if sample_weight is not None:  # XGBoost ranking weights are per query
            sample_weight = np.add.reduceat(np.asarray(sample_weight, float), starts) / sizes
        return sample_weight, {"qid": np.repeat(np.arange(sizes.shape[0]), sizes)}
    return sample_weight, {}


def eval_arguments(estimator, kind: str, sets: list, extras: list, weights: list) -> dict:
    """The inner model's eval-set arguments from sorted eval sets ``(X, y)``, their
    query arguments (``extras``) and their weights."""
    if "eval_X" in fit_params(estimator):  # LightGBM >= 4.7 deprecates eval_set
        out = {"eval_X": tuple(X for X, _ in sets), "eval_y": tuple(y for _, y in sets)}
    else:
        out = {"eval_set": sets}
    has_weights = any(w is not None for w in weights)
    if kind == "group":
        out["eval_group"] = [extra["group"] for extra in extras]
    elif kind == "qid":
        out["eval_qid"] = [extra["qid"] for extra in extras]
    if has_weights:
        name = "sample_weight_eval_set" if kind == "qid" else "eval_sample_weight"
        out[name] = weights
    return out
