"""The one place that imports scikit-learn's private helpers.

scikit-learn does not promise these names across releases; keeping every such
import here means a scikit-learn release can break one file, not the package.
Importing this module costs about a second (scikit-learn's validation
machinery), so :mod:`sklearn_rank.metrics` imports it lazily.
"""

from sklearn.utils import _safe_indexing
from sklearn.utils._metadata_requests import _routing_enabled
from sklearn.utils._param_validation import (
    Interval,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = [
    "Interval",
    "StrOptions",
    "routing_enabled",
    "safe_indexing",
    "validate_parameter_constraints",
]


def routing_enabled() -> bool:
    """Whether ``sklearn.set_config(enable_metadata_routing=True)`` is in effect."""
    return _routing_enabled()


def safe_indexing(X, indices, *, axis=0):
    """Rows (``axis=0``) or columns (``axis=1``) of an array, sparse matrix or DataFrame.

    scikit-learn's own indexing helper: NumPy, SciPy sparse, pandas and polars
    (and, in recent releases, any DataFrame narwhals knows) alike; integer
    indices are positions for every input.
    """
    return _safe_indexing(X, indices, axis=axis)
