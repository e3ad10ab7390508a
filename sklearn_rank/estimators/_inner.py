"""What QueryRanker's inner model takes: its query arguments, labels and eval sets.

LightGBM takes group sizes (``group``, ``eval_group``), XGBoost sorted query
ids (``qid``, ``eval_qid``) and one weight per query, CatBoost sorted group
ids (``group_id``) with one weight per query (``group_weight``, one per row)
and its eval sets as ``Pool`` objects, a pointwise regressor nothing about
queries. Which one a model is, is read from its ``fit`` signature
(:func:`fit_kind`).
"""

from __future__ import annotations

import inspect

import numpy as np

__all__ = ["check_labels", "eval_arguments", "fit_kind", "is_catboost", "query_arguments",
           "refuse_query_arguments"]

# LightGBM's default label_gain has 31 entries: labels 0..30.
LIGHTGBM_MAX_LABELS = 31
# XGBoost's exponential NDCG gain accepts relevance degrees below 32.
XGBOOST_MAX_LABELS = 32


def fit_params_of(estimator) -> set:
    """The names of the parameters of ``estimator.fit``."""
    try:
        return set(inspect.signature(estimator.fit).parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins without signatures
        return set()


def fit_kind(estimator) -> str:
    """How the inner model takes queries: 'qid' (XGBoost), 'group' (LightGBM),
    'group_id' (CatBoost) or 'none'."""
    params = fit_params_of(estimator)
    for kind in ("qid", "group", "group_id"):
        if kind in params:
            return kind
    return "none"


def is_catboost(estimator) -> bool:
    """Whether the inner model is one of CatBoost's (its eval sets are Pools)."""
    return type(estimator).__module__.partition(".")[0] == "catboost"


#: The query arguments of the inner models, which QueryRanker builds itself,
#: and what to pass to QueryRanker instead.
_BUILT = {"group": "qid=sklearn_rank.datasets.qid_from_group_sizes(group) (LightGBM's "
                   "group sizes turned into one query id per row)",
          "eval_group": "eval_qid=[sklearn_rank.datasets.qid_from_group_sizes(g) for g in "
                        "eval_group]",
          "group_id": "qid=<one query id per row>",
          "group_weight": "sample_weight=<one weight per row>"}


def refuse_query_arguments(fit_params: dict) -> None:
    """Refuse the inner model's own query arguments among ``**fit_params``:
    QueryRanker builds them from per-row query ids."""
    for name, instead in _BUILT.items():
        if name in fit_params:
            raise ValueError(
                f"QueryRanker builds {name} from query ids; pass {instead} instead of "
                f"{name}=."
            )
    if "eval_X" in fit_params or "eval_y" in fit_params:
        raise ValueError(
            "Pass validation data to QueryRanker as eval_set=[(X, y), ...] with "
            "eval_qid=[qid, ...]; it sorts them by query and hands them to the inner "
            "model in the form it takes (eval_X / eval_y for LightGBM >= 4.7)."
        )


def check_labels(y: np.ndarray, kind: str, estimator) -> np.ndarray:
    """Labels the inner model's objective takes: real numbers; for LightGBM's and
    XGBoost's ranking objectives non-negative integers below their limit (int64
    when given as floats); for CatBoost's ranking losses finite numbers
    (non-negative for QuerySoftMax)."""
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
    if kind == "group_id":
        _check_catboost_labels(y, estimator)
        return y
    bad = (y < 0) | (y != np.floor(y))
    if bad.any():
        raise ValueError(
            f"y has {int(bad.sum())} label(s) that are not non-negative integers (first: "
            f"{y[bad][0]!r}); {type(estimator).__name__}'s ranking objective "
            "needs graded relevance labels 0, 1, 2, ..."
        )
    _check_label_range(y, kind, estimator)
    return y.astype(np.int64) if y.dtype.kind == "f" else y


def catboost_loss(estimator) -> str:
    """The name of a CatBoost model's loss (``"YetiRank"`` for
    ``"YetiRank:decay=0.9"``); CatBoostRanker's default when unset."""
    params = estimator.get_params()
    loss = params.get("loss_function") or params.get("objective") or "YetiRank"
    return loss.partition(":")[0] if isinstance(loss, str) else type(loss).__name__


def _check_catboost_labels(y: np.ndarray, estimator) -> None:
    """CatBoost's ranking losses (YetiRank, PairLogit, QueryRMSE, LambdaMart, ...)
    take any finite label, real-valued and negative ones included; QuerySoftMax
    weights log-probabilities by the labels and refuses negative ones."""
    negative = y < 0
    if catboost_loss(estimator) == "QuerySoftMax" and negative.any():
        raise ValueError(
            f"y has {int(negative.sum())} negative label(s) (first: "
            f"{y[negative][0].item()!r}), but CatBoost's QuerySoftMax loss weights each "
            "document by its label and needs labels >= 0; shift the labels, or choose "
            "another loss_function (YetiRank, PairLogit, QueryRMSE, ...)."
        )


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
    model takes them, and its query argument (``group`` sizes, sorted ``qid`` or
    ``group_id``). XGBoost and CatBoost weigh queries, not rows: a query's weight
    is the mean of its rows' (CatBoost's ``group_weight`` repeats it on every row)."""
    if kind == "group":
        return sample_weight, {"group": sizes}
    if kind == "none":
        return sample_weight, {}
    ids = np.repeat(np.arange(sizes.shape[0]), sizes)
    if sample_weight is not None:
        sample_weight = np.add.reduceat(np.asarray(sample_weight, float), starts) / sizes
    if kind == "qid":
        return sample_weight, {"qid": ids}
    extra = {"group_id": ids}
    if sample_weight is not None:
        extra["group_weight"] = np.repeat(sample_weight, sizes)
    return None, extra


#: The fit arguments of a CatBoost model that its eval Pools must share.
CATBOOST_FEATURE_ARGUMENTS = ("cat_features", "text_features", "embedding_features")


def eval_arguments(estimator, kind: str, sets: list, extras: list, weights: list,
                   fit_params: dict) -> dict:
    """The inner model's eval-set arguments from sorted eval sets ``(X, y)``, their
    query arguments (``extras``), their weights and the other ``fit_params``."""
    if is_catboost(estimator):
        return {"eval_set": _catboost_pools(sets, extras, weights, fit_params)}
    if "eval_X" in fit_params_of(estimator):  # LightGBM >= 4.7 deprecates eval_set
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


def _catboost_pools(sets: list, extras: list, weights: list, fit_params: dict) -> list:
    """CatBoost's eval sets: one ``Pool`` per set, with its ``group_id`` (and
    ``group_weight``) or row weights, and the training data's categorical, text
    and embedding features."""
    from catboost import Pool

    features = {name: fit_params[name] for name in CATBOOST_FEATURE_ARGUMENTS
                if fit_params.get(name) is not None}
    return [Pool(X, label=y, weight=w, **extra, **features)
            for (X, y), extra, w in zip(sets, extras, weights, strict=True)]
