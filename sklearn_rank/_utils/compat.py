"""The one place that imports scikit-learn's private helpers.

scikit-learn does not promise these names across releases; keeping every such
import here means a scikit-learn release can break one file, not the package.
Importing this module costs about a second (scikit-learn's validation
machinery), so :mod:`sklearn_rank.metrics` imports it lazily. Where
scikit-learn has a public equivalent (``sklearn.get_config()``,
``sklearn.utils.check_array``), the package uses that instead.
"""

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.validation import _check_n_features, _check_sample_weight

__all__ = [
    "HasMethods",
    "Interval",
    "Options",
    "RealNotInt",
    "ScorerHooksMixin",
    "StrOptions",
    "check_n_features",
    "check_sample_weight",
    "fit_context",
    "safe_indexing",
    "validate_parameter_constraints",
]


def safe_indexing(X, indices, *, axis=0):
    """Rows (``axis=0``) or columns (``axis=1``) of an array, sparse matrix or DataFrame.

    scikit-learn's own indexing helper: NumPy, SciPy sparse, pandas and polars
    (and, in recent releases, any DataFrame narwhals knows) alike; integer
    indices are positions for every input.
    """
    return _safe_indexing(X, indices, axis=axis)


def fit_context(fit_method):
    """Decorate ``fit`` as scikit-learn's estimators do: validate the estimator's
    ``_parameter_constraints`` first (unless validation is globally skipped).

    Nested validation is kept (``prefer_skip_nested_validation=False``), as for
    scikit-learn's meta-estimators: the inner estimator is given by the user
    and checks its own parameters.
    """
    return _fit_context(prefer_skip_nested_validation=False)(fit_method)


def check_sample_weight(sample_weight, X):
    """Row weights as a float64 array of one weight per row of ``X``, refused
    (by scikit-learn, in its words) when they are not finite, negative, all
    zero or of another length."""
    return _check_sample_weight(sample_weight, X, dtype=np.float64,
                                ensure_non_negative=True)


def check_n_features(estimator, X) -> None:
    """Refuse an ``X`` with another number of columns than in ``fit``."""
    _check_n_features(estimator, X, reset=False)


class ScorerHooksMixin:
    """The private hooks scikit-learn's scoring machinery asks a scorer for.

    Put this mixin among the bases of a scorer class that does not derive
    from scikit-learn's own (private) scorer classes.
    """

    def _routing_repr(self) -> str:
        # how metadata-routing messages name the scorer (scikit-learn >= 1.8)
        return repr(self)

    def _accept_sample_weight(self) -> bool:
        # asked without routing by the multi-metric scorer: may it pass
        # sample_weight on? The scorers of this package take it.
        return True


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
        from .. import __version__

        cls = type(self)
        public = [part for part in cls.__module__.split(".") if not part.startswith("_")]
        return {
            # released versions read the stable docs; development versions the latest
            "version": "latest" if "dev" in __version__ else "stable",
            "estimator_module": ".".join(public),
            "estimator_name": cls.__name__,
        }
