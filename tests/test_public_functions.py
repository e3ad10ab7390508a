"""Every public function and class declares the constraints of its parameters.

imbalanced-learn's ``test_function_param_validation``, for the whole public
API: every function in an ``__all__`` of a public module of the package must
carry ``_skl_parameter_constraints`` (:func:`sklearn_rank._utils.validation.validate_params`)
covering exactly its signature, its defaults must meet them, and a value of a
bad type or a value scikit-learn generates outside each constraint must raise
scikit-learn's ``InvalidParameterError`` naming the parameter and the function,
before the function does anything. Estimators and splitters declare
``_parameter_constraints`` and are checked the same way.
"""

import importlib
import inspect
import os
import pkgutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import Ridge
from sklearn.model_selection import BaseCrossValidator
from sklearn.utils._param_validation import (
    InvalidParameterError,
    generate_invalid_param_val,
    generate_valid_param,
    make_constraint,
)
from sklearn.utils.estimator_checks import check_param_validation

import sklearn_rank
from sklearn_rank._utils import compat as _compat
from sklearn_rank._utils.validation import satisfies
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import MetricSpec, parse_metric
from sklearn_rank.model_selection import QueryKFold, QueryShuffleSplit


def _public_modules():
    yield sklearn_rank
    for info in pkgutil.walk_packages(sklearn_rank.__path__, "sklearn_rank."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            yield importlib.import_module(info.name)


def _public(kind) -> dict:
    """``{public name: object}`` for the functions or classes (``kind`` is
    ``inspect.isfunction`` or ``inspect.isclass``), each once, under the name of
    the subpackage that exports it (``sklearn_rank.metrics.ndcg_score``, not the
    top-level re-export)."""
    found = {}
    for module in _public_modules():
        for name in module.__all__:
            obj = getattr(module, name)
            if kind(obj):
                found.setdefault(obj, []).append(f"{module.__name__}.{name}")
    return {max(names, key=len): obj for obj, names in found.items()}


FUNCTIONS = _public(inspect.isfunction)
DECLARED = FUNCTIONS  # no exemption: every public function declares its constraints


def _parameters(func) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(func).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _sklearn(constraint):
    """scikit-learn's constraint object for one of ``_validation``'s."""
    if hasattr(constraint, "to_sklearn"):
        constraint = constraint.to_sklearn(_compat)
    return make_constraint(constraint)


#: Values of the types scikit-learn cannot make one of (abstract classes, classes
#: whose constructor takes arguments).
EXAMPLES = {os.PathLike: Path("x"), Mapping: {}, Iterable: [],
            MetricSpec: parse_metric("ndcg@10")}


def _valid(constraints):
    """A value meeting one of ``constraints``; the function never sees it (another
    argument is refused first)."""
    if constraints == "no_validation":
        return 1
    for constraint in constraints:
        if isinstance(constraint, type) and constraint in EXAMPLES:
            value = EXAMPLES[constraint]
        else:
            try:
                value = generate_valid_param(_sklearn(constraint))
            except TypeError:  # a class scikit-learn cannot instantiate
                continue
        if _sklearn(constraint).is_satisfied_by(value):
            return value
    raise AssertionError(f"no valid value could be made for {constraints}")


def test_the_public_functions_are_found():
    # A sample from every public module: the enumeration misses none.
    for name in ("sklearn_rank.metrics.make_ranking_scorer", "sklearn_rank.metrics.ndcg_score",
                 "sklearn_rank.stats.compare", "sklearn_rank.trec.evaluate_run",
                 "sklearn_rank.datasets.make_ranking", "sklearn_rank.dask.evaluate",
                 "sklearn_rank.model_selection.cross_validate_ranker"):
        assert name in FUNCTIONS
    assert len(FUNCTIONS) == len(set(FUNCTIONS.values()))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_public_function_declares_its_constraints(name):
    func = FUNCTIONS[name]
    constraints = getattr(func, "_skl_parameter_constraints", None)
    assert constraints is not None, (
        f"{name} declares no parameter constraints: decorate it with "
        "sklearn_rank._utils.validation.validate_params")
    params = {p.name for p in _parameters(func)}
    assert set(constraints) == params


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_defaults_meet_the_constraints(name):
    func = DECLARED[name]
    constraints = func._skl_parameter_constraints
    for p in _parameters(func):
        allowed = constraints[p.name]
        if p.default is p.empty or allowed == "no_validation":
            continue
        assert any(_sklearn(c).is_satisfied_by(p.default) for c in allowed), p.name
        assert any(satisfies(c, p.default) for c in allowed), p.name  # the stand-ins agree


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_function_param_validation(name):
    """A bad type and every value generated outside a constraint are refused with
    scikit-learn's error naming the parameter and the function."""
    func = DECLARED[name]
    constraints = func._skl_parameter_constraints
    required = {p.name: _valid(constraints[p.name]) for p in _parameters(func)
                if p.default is p.empty}
    bad_type = type("BadType", (), {})()
    for p in _parameters(func):
        allowed = constraints[p.name]
        if allowed == "no_validation":
            continue
        match = rf"The '{p.name}' parameter of {func.__qualname__} must be .* Got .* instead\."
        with pytest.raises(InvalidParameterError, match=match):
            func(**{**required, p.name: bad_type})
        for constraint in allowed:
            try:
                bad = generate_invalid_param_val(_sklearn(constraint))
            except NotImplementedError:
                continue
            with pytest.raises(InvalidParameterError, match=match):
                func(**{**required, p.name: bad})


# ---------------------------------------------------------------- estimators, splitters


ESTIMATORS = {name: cls for name, cls in _public(inspect.isclass).items()
              if issubclass(cls, BaseEstimator | BaseCrossValidator)}


def test_the_estimators_and_splitters_are_found():
    assert {QueryRanker, QueryKFold, QueryShuffleSplit} <= set(ESTIMATORS.values())


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_every_estimator_and_splitter_declares_its_constraints(name):
    cls = ESTIMATORS[name]
    constraints = cls.__dict__.get("_parameter_constraints")
    assert constraints is not None, f"{name} declares no _parameter_constraints"
    assert set(constraints) == set(inspect.signature(cls).parameters)


def test_query_ranker_param_validation():
    """scikit-learn's own check: the constraints cover the parameters, and fit
    refuses a bad type or value with InvalidParameterError."""
    check_param_validation("QueryRanker", QueryRanker(Ridge()))


def test_query_ranker_validates_in_fit_only():
    ranker = QueryRanker(Ridge(), qid_column=1.5)  # construction keeps any value
    assert ranker.get_params()["qid_column"] == 1.5
    X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    with pytest.raises(InvalidParameterError, match=r"The 'qid_column' parameter of "
                                                    r"QueryRanker must be"):
        ranker.fit(X, y)


@pytest.mark.parametrize("cls", [QueryKFold, QueryShuffleSplit])
def test_splitter_param_validation(cls):
    """Splitters refuse bad parameters when they are made, as scikit-learn's do."""
    constraints = cls._parameter_constraints
    params = [p for p in inspect.signature(cls).parameters.values()]
    assert set(constraints) == {p.name for p in params}
    for p in params:
        assert any(_sklearn(c).is_satisfied_by(p.default) for c in constraints[p.name])
    bad_type = type("BadType", (), {})()
    for p in params:
        match = rf"The '{p.name}' parameter of {cls.__name__} must be .* Got .* instead\."
        with pytest.raises(InvalidParameterError, match=match):
            cls(**{p.name: bad_type})
        for constraint in constraints[p.name]:
            try:
                bad = generate_invalid_param_val(make_constraint(constraint))
            except NotImplementedError:
                continue
            with pytest.raises(InvalidParameterError, match=match):
                cls(**{p.name: bad})
