"""The one place that imports scikit-learn's private helpers.

scikit-learn does not promise these names across releases; keeping every such
import here means a scikit-learn release can break one file, not the package.
Importing this module costs about a second (scikit-learn's validation
machinery), so :mod:`sklearn_rank.metrics` imports it lazily.
"""

from sklearn.utils import _safe_indexing
from sklearn.utils._metadata_requests import _routing_enabled
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
)

__all__ = [
    "HasMethods",
    "Interval",
    "Options",
    "RealNotInt",
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


# The documentation site; the estimators' HTML repr links to their API pages there.
DOCS_URL = "https://sklearn-rank.readthedocs.io/en/{version}/"
API_PAGE = "api/generated/{estimator_module}.{estimator_name}.html"


class DocLinkMixin:
    """Point the "?" of an estimator's HTML repr at this package's API reference.

    scikit-learn's HTML repr (``_HTMLDocumentationLinkMixin`` of
    ``BaseEstimator``) reads these three private attributes; a subclass
    defined outside ``sklearn_rank`` gets no link, as in scikit-learn. Put
    this mixin before ``BaseEstimator`` among the bases.
    """

    _doc_link_module = "sklearn_rank"
    _doc_link_template = DOCS_URL + API_PAGE

    def _doc_link_url_param_generator(self) -> dict:
        from . import __version__

        cls = type(self)
        public = [part for part in cls.__module__.split(".") if not part.startswith("_")]
        return {
            # released versions read the stable docs; development versions the latest
            "version": "latest" if "dev" in __version__ else "stable",
            "estimator_module": ".".join(public),
            "estimator_name": cls.__name__,
        }
