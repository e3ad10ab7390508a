"""Display positions for position-debiased learning to rank (``QueryRanker.fit(position=)``).

Two inner models learn from positions: XGBoost's ``XGBRanker(lambdarank_unbiased=True)``
reads a row's display position from its order within its query (rows sorted by
query, then by position), and LightGBM's lambdarank objective reads
``Dataset(position=)``. LightGBM's scikit-learn ``fit`` has no ``position``
argument (4.7 neither), so :func:`fit_lightgbm_with_position` trains the
``LGBMRanker`` through LightGBM's ``train`` on a ``Dataset`` with positions and
leaves the ``LGBMRanker`` fitted as its own ``fit`` would. Every other model
is refused: positions they would ignore would make a biased model silently.
"""

from __future__ import annotations

import numpy as np

from ._inner import fit_params_of

__all__ = ["check_position", "fit_lightgbm_with_position", "sort_within_queries"]

#: What the error says supports positions.
SUPPORTED = ("xgboost.XGBRanker(lambdarank_unbiased=True), which reads the display "
             "position from the rows' order within a query, and lightgbm.LGBMRanker "
             "(objective 'lambdarank', LightGBM >= 4.1), which gets Dataset(position=)")


def check_position(position, n_rows: int, kind: str, estimator) -> np.ndarray:
    """``position`` as an int64 array of one non-negative integer per row, once
    the inner model is known to learn from it; otherwise a ValueError."""
    _check_learns_positions(kind, estimator)
    return _position_values(position, n_rows)


def _check_learns_positions(kind: str, estimator) -> None:
    """A ValueError unless the inner model, as configured, learns from positions."""
    name = type(estimator).__name__
    if kind not in ("qid", "group"):
        raise ValueError(
            f"position= was passed, but {name} does not learn from display positions; "
            f"position-debiased training is supported by {SUPPORTED}. Drop position= "
            "for this model."
        )
    params = estimator.get_params()
    if kind == "qid" and not params.get("lambdarank_unbiased"):
        raise ValueError(
            f"position= was passed, but {name} ignores positions unless "
            "lambdarank_unbiased=True; pass estimator__lambdarank_unbiased=True (XGBoost "
            "then reads each row's position from its order within its query, which "
            "QueryRanker sorts by position), or drop position=."
        )
    if kind == "group" and params.get("objective") not in (None, "lambdarank"):
        raise ValueError(
            f"position= was passed, but LightGBM uses positions only with the "
            f"'lambdarank' objective, not {params.get('objective')!r}; set "
            "estimator__objective='lambdarank', or drop position=."
        )


def _position_values(position, n_rows: int) -> np.ndarray:
    """``position`` as int64 display ranks, one per row, or a ValueError saying why not."""
    if isinstance(position, (set, frozenset, dict)):
        raise ValueError("position must be an array with one display position per row; "
                         f"got a {type(position).__name__}, which has no row order.")
    values = np.asarray(position)
    if values.ndim != 1 or values.shape[0] != n_rows:
        raise ValueError(
            f"position must hold one display position per row: X has {n_rows} rows, "
            f"position has shape {values.shape}.")
    if values.dtype.kind not in "iuf" or (
            values.dtype.kind == "f" and not np.isfinite(values).all()):
        raise ValueError(
            f"position must hold integer display positions (0 or 1 for the top); got "
            f"dtype {values.dtype}" + (" with NaN or inf" if values.dtype.kind == "f" else
                                       "") + ".")
    bad = (values < 0) | (values != np.floor(values))
    if bad.any():
        raise ValueError(
            f"position has {int(bad.sum())} value(s) that are not non-negative integers "
            f"(first: {values[bad][0].item()!r}); pass the rank at which each row was "
            "displayed (0 or 1 for the top).")
    if values.size and values.max() > np.iinfo(np.int32).max:
        raise ValueError("position holds values above 2**31 - 1; pass display ranks.")
    return values.astype(np.int64)


def sort_within_queries(order, sizes: np.ndarray, position: np.ndarray):
    """The row order that sorts rows by query (``order``: None when they already
    are, ``sizes``: the queries' sizes in that order) and, within a query, stably
    by ``position``; refuses a position shown twice in one query (XGBoost would
    read two display ranks for it)."""
    n = position.shape[0]
    base = np.arange(n) if order is None else order
    query = np.repeat(np.arange(sizes.shape[0]), sizes)
    within = np.lexsort((position[base], query))
    new = base[within]
    sorted_position = position[new]
    dup = (sorted_position[1:] == sorted_position[:-1]) & (query[1:] == query[:-1])
    if dup.any():
        row = int(new[1:][dup][0])
        raise ValueError(
            f"position {sorted_position[1:][dup][0]} appears twice in one query (row "
            f"{row}); XGBoost reads each row's position from its order within the query, "
            "so each list shown to a user must be its own query: pass one qid per "
            "displayed list (e.g. a session id).")
    return None if order is None and (within == np.arange(n)).all() else new


#: The LightGBM ``fit`` arguments the position path hands on.
_LIGHTGBM_ARGUMENTS = {"sample_weight", "group", "eval_set", "eval_X", "eval_y",
                       "eval_group", "eval_sample_weight", "eval_names", "eval_metric",
                       "eval_at", "feature_name", "categorical_feature", "callbacks"}


def lightgbm_takes_position(estimator) -> bool:
    """Whether the LightGBM model's own ``fit`` takes ``position`` (a later LightGBM)."""
    return "position" in fit_params_of(estimator)


def fit_lightgbm_with_position(model, X, y, *, position, group, **kwargs):
    """Fit ``model`` (an unfitted ``LGBMRanker``) as its ``fit`` would, with
    ``Dataset(position=position)``: LightGBM's ``train`` with the parameters the
    model's ``fit`` would use, the fitted booster and its results set on the model."""
    import lightgbm as lgb
    from lightgbm.sklearn import _EvalFunctionWrapper

    other = sorted(set(kwargs) - _LIGHTGBM_ARGUMENTS)
    if other:
        raise ValueError(
            f"With position=, QueryRanker trains LightGBM through its Dataset API, which "
            f"takes these fit arguments: {sorted(_LIGHTGBM_ARGUMENTS)}; drop "
            f"{', '.join(other)}.")
    model._eval_at = kwargs.get("eval_at", (1, 2, 3, 4, 5))
    params = model._process_params(stage="fit")
    metrics = kwargs.get("eval_metric")
    metrics = [] if metrics is None else list(metrics) if isinstance(metrics, list) else [
        metrics]
    feval = [_EvalFunctionWrapper(m) for m in metrics if callable(m)]
    builtin = [m for m in metrics if isinstance(m, str)]
    params["metric"] = ([params["metric"]] if isinstance(params["metric"], (str, type(None)))
                        else params["metric"])
    params["metric"] = [m for m in builtin if m not in params["metric"]] + [
        m for m in params["metric"] if m is not None]
    model.n_features_in_ = X.shape[1]
    train_set = lgb.Dataset(
        X, label=y, weight=kwargs.get("sample_weight"), group=group, position=position,
        feature_name=kwargs.get("feature_name", "auto"),
        categorical_feature=kwargs.get("categorical_feature", "auto"), params=params)
    valid_sets = _valid_sets(kwargs, params)
    evals_result: dict = {}
    callbacks = [*(kwargs.get("callbacks") or []), lgb.record_evaluation(evals_result)]
    booster = lgb.train(params, train_set, num_boost_round=model.n_estimators,
                        valid_sets=valid_sets, valid_names=kwargs.get("eval_names"),
                        feval=feval, callbacks=callbacks)
    model._Booster = booster
    model._n_features = booster.num_feature()
    model._fitted_with_feature_names = train_set._has_non_default_feature_names
    model._evals_result = evals_result
    model._best_iteration = booster.best_iteration
    model._best_score = booster.best_score
    model.fitted_ = True
    booster.free_dataset()
    return model


def _valid_sets(kwargs: dict, params: dict) -> list:
    import lightgbm as lgb

    if kwargs.get("eval_X") is not None:
        sets = list(zip(kwargs["eval_X"], kwargs["eval_y"], strict=True))
    else:
        sets = list(kwargs.get("eval_set") or [])
    groups = kwargs.get("eval_group") or [None] * len(sets)
    weights = kwargs.get("eval_sample_weight") or [None] * len(sets)
    return [lgb.Dataset(X, label=y, weight=w, group=g, params=params)
            for (X, y), g, w in zip(sets, groups, weights, strict=True)]
