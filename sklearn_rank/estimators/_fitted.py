"""What a fitted QueryRanker shows of its inner model.

A fitted ``QueryRanker`` answers for the fitted attributes of its inner model
(``feature_importances_``, ``best_iteration_``, ``evals_result_``,
``booster_``, ...) under the inner model's own names: scikit-learn's names
ending in ``_``, and XGBoost's ``best_iteration`` / ``best_score``, which have
no trailing underscore. Nothing else is forwarded — not the inner model's
parameters (reach them as ``estimator__<name>``), not its methods — so that
``hasattr`` tells the truth and duck typing by scikit-learn is unchanged.

``n_features_in_`` and ``feature_names_in_`` are QueryRanker's own: they
describe ``X`` as it was given, the query-id column included. The per-feature
attributes of scikit-learn's convention, ``feature_importances_`` and
``coef_``, are aligned with those columns too: when a query-id column was
dropped before the inner model saw ``X``, they hold NaN at its position, as
:func:`sklearn_rank.inspection.permutation_importance` does, so that
``zip(X.columns, ranker.feature_importances_)`` pairs each name with its own
number. Every other attribute is the inner model's, as it is.
"""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError

__all__ = ["ALIGNED", "UNDERSCORELESS", "InnerAttributesMixin", "forwarded", "inner_attribute"]

#: QueryRanker's own attributes, about X as given: never the inner model's.
OWN = frozenset({"n_features_in_", "feature_names_in_"})
#: Fitted attributes without scikit-learn's trailing underscore (XGBoost's).
UNDERSCORELESS = frozenset({"best_iteration", "best_score"})
#: Per-feature attributes given one entry per column of X (NaN for the query ids).
ALIGNED = frozenset({"feature_importances_", "coef_"})


def forwarded(name: str) -> bool:
    """Whether QueryRanker answers for the inner model's attribute ``name``."""
    if name.startswith("_") or name in OWN:
        return False
    return name.endswith("_") or name in UNDERSCORELESS


def forwarded_names(ranker) -> list:
    """The forwarded names the fitted inner model of ``ranker`` has (for ``dir``)."""
    inner = vars(ranker).get("estimator_")
    if inner is None:
        return []
    return [name for name in dir(inner) if forwarded(name) and hasattr(inner, name)]


def inner_attribute(ranker, name: str):
    """The fitted inner model's attribute ``name`` (aligned with the columns of X
    for :data:`ALIGNED` names); ``NotFittedError`` before ``fit``.

    Reads ``vars(ranker)`` only, so that it cannot recurse through
    ``__getattr__`` (e.g. while an instance is being unpickled).
    """
    state = vars(ranker)
    who = type(ranker).__name__
    inner = state.get("estimator_")
    if inner is None:
        raise NotFittedError(
            f"This {who} instance is not fitted yet, so it has no {name!r} (an attribute "
            f"of the fitted inner model, estimator_). Call 'fit' with appropriate arguments "
            "before using this attribute."
        )
    try:
        value = getattr(inner, name)
    except AttributeError as error:
        raise AttributeError(
            f"{who!r} object has no attribute {name!r}: its fitted inner model "
            f"{type(inner).__name__} has none ({error})"
        ) from error
    position = state.get("_qid_position_in_fit")
    if name in ALIGNED and position is not None:
        return _with_qid_column(value, position, state.get("n_features_in_"))
    return value


def _with_qid_column(value, position: int, n_features_in):
    """A per-feature array of the inner model with NaN inserted at the query-id
    column's position (last axis), as floats; other values as they are."""
    if (not isinstance(value, np.ndarray) or value.ndim == 0 or n_features_in is None
            or value.shape[-1] != n_features_in - 1):
        return value
    return np.insert(value.astype(np.float64), position, np.nan, axis=-1)


class InnerAttributesMixin:
    """Answer for the fitted attributes of the inner model ``estimator_``."""

    def __getattr__(self, name):
        # Called only for names the instance and its class lack, and forwards
        # none that starts with "_": copying, pickling and scikit-learn's probes
        # (``__sklearn_tags__``, ``_repr_html_``, ...) never reach the inner model.
        if not forwarded(name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return inner_attribute(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(forwarded_names(self)))
