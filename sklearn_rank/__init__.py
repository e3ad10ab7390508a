"""sklearn_rank: tune and judge ranking models with scikit-learn.

The headline names are re-exported lazily, so ``import sklearn_rank`` stays
cheap and never imports LightGBM or pandas.
"""

from importlib import import_module

__version__ = "0.1.0"

_LAZY = {
    "ndcg_score": "sklearn_rank.metrics",
    "evaluate": "sklearn_rank.metrics",
    "make_ranking_scorer": "sklearn_rank.metrics",
    "QueryKFold": "sklearn_rank.model_selection",
    "QueryRanker": "sklearn_rank.estimators",
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sklearn_rank' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
