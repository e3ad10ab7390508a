"""The light parameter constraints of sklearn_rank._utils.validation agree with
scikit-learn's, and a refused value gets scikit-learn's own message."""

from numbers import Integral, Real

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils import _param_validation as skv

from sklearn_rank._utils import compat as _compat
from sklearn_rank._utils.validation import (
    HasMethods,
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    satisfies,
    validate_params,
)

CONSTRAINTS = [
    None, callable, "array-like", "sparse matrix", "boolean", "random_state", str, Integral,
    Real, dict,
    Interval(Integral, 1, None, closed="left"),
    Interval(Integral, None, 0, closed="right"),
    Interval(Real, 0, 1, closed="both"),
    Interval(Real, 0, 1, closed="neither"),
    Interval(Real, 1, None, closed="neither"),
    Interval(RealNotInt, 0, 1, closed="right"),
    Interval(Real, None, None, closed="neither"),
    StrOptions({"average", "stable"}),
    Options(Real, {0.5, 1.0}),
    HasMethods(("fit", "predict")),
]


class _Model:
    def fit(self):
        pass

    def predict(self):
        pass


VALUES = [
    None, 0, 1, -1, 2, 10**30, -(10**30), 2**32, True, False, np.bool_(True), np.int64(3),
    np.uint8(1), 0.0, 0.5, 1.0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"),
    np.float32(0.25), np.float64("nan"), "average", "stable", "x", "", b"average",
    [1, 2], (1,), np.arange(3), np.float64(1.0), {"a": 1}, {1, 2}, len, _Model(),
    _Model, sp.csr_matrix((2, 2)), np.random.RandomState(0), np.array(1.0), object(),
]


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=repr)
def test_stand_ins_agree_with_scikit_learn(constraint):
    sk = skv.make_constraint(
        constraint.to_sklearn(_compat) if hasattr(constraint, "to_sklearn") else constraint)
    for value in VALUES:
        assert satisfies(constraint, value) == sk.is_satisfied_by(value), value


@validate_params({"k": [Interval(Integral, 1, None, closed="left"), None],
                  "ties": [StrOptions({"average", "stable"})]})
def _scored(k=None, *, ties="average"):
    return k, ties


def test_refused_value_gets_scikit_learns_message():
    assert _scored(3, ties="stable") == (3, "stable")
    with pytest.raises(ValueError, match=r"The 'k' parameter of _scored must be an int in "
                                         r"the range \[1, inf\) or None. Got 0 instead."):
        _scored(0)
    with pytest.raises(TypeError, match="'ties' parameter of _scored must be a str among"):
        _scored(ties="random")
    assert _scored._skl_parameter_constraints["k"][1] is None


def test_every_parameter_needs_a_constraint():
    with pytest.raises(TypeError, match=r"declares no constraint for \['b'\]"):
        validate_params({"a": [None]})(lambda a, b: None)
