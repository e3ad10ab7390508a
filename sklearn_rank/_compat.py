"""The one place that imports scikit-learn's private helpers.

scikit-learn does not promise these names across releases; keeping every such
import here means a scikit-learn release can break one file, not the package.
"""

from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
    validate_params,
)

__all__ = [
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "validate_parameter_constraints",
    "validate_params",
]
