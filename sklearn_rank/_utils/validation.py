"""Parameter validation, declared once at the public boundary.

Public functions declare their parameters' constraints with
:func:`validate_params`, in scikit-learn's vocabulary: ``Interval``,
``StrOptions``, ``Options``, ``HasMethods``, types, ``callable``, ``None`` and
the strings ``"array-like"``, ``"sparse matrix"``, ``"boolean"``,
``"random_state"`` and ``"no_validation"``. Private helpers trust their
inputs.

Checking a value needs none of scikit-learn's validation machinery, whose
import takes about a second (a one-off ``sklearn-rank evaluate`` cannot afford
it): the constraint classes below are light stand-ins for scikit-learn's, with
the same names and the same rules, and a value that meets one of its
constraints passes at once. A value that meets none is handed to
scikit-learn's ``validate_parameter_constraints`` (through
:mod:`sklearn_rank._utils.compat`), which words the error: an
``InvalidParameterError``, both a ValueError and a TypeError. The stand-ins
are tested to agree with scikit-learn's constraints on a battery of values.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterable, Mapping, MappingView, Set
from dataclasses import dataclass
from numbers import Integral
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "HasMethods",
    "Interval",
    "Options",
    "RealNotInt",
    "StrOptions",
    "check_ordered",
    "check_params",
    "python_scalar",
    "satisfies",
    "validate_params",
]


class RealNotInt:
    """Stands for scikit-learn's ``RealNotInt``: a float (NumPy's float64 included)."""


class Interval(NamedTuple):
    """Numbers of ``type`` between ``left`` and ``right`` (None: unbounded)."""

    type: type
    left: float | None
    right: float | None
    closed: str = "both"

    def is_satisfied_by(self, value) -> bool:
        if not isinstance(value, float if self.type is RealNotInt else self.type):
            return False
        if not isinstance(value, Integral) and math.isnan(value):
            return False
        left = -math.inf if self.left is None else self.left  # (a bound None is infinite:
        right = math.inf if self.right is None else self.right  # "neither" excludes it)
        low_ok = value > left or (value == left and self.closed in ("left", "both"))
        high_ok = value < right or (value == right and self.closed in ("right", "both"))
        return low_ok and high_ok

    def to_sklearn(self, sk):
        kind = sk.RealNotInt if self.type is RealNotInt else self.type
        return sk.Interval(kind, self.left, self.right, closed=self.closed)


@dataclass(frozen=True)
class StrOptions:
    """One of a set of strings."""

    options: frozenset

    def __init__(self, options: Iterable[str]):
        object.__setattr__(self, "options", frozenset(options))

    def is_satisfied_by(self, value) -> bool:
        return isinstance(value, str) and value in self.options

    def to_sklearn(self, sk):
        return sk.StrOptions(set(self.options))


class Options(NamedTuple):
    """One of a set of values of ``type``."""

    type: type
    options: frozenset

    def is_satisfied_by(self, value) -> bool:
        return isinstance(value, self.type) and value in self.options

    def to_sklearn(self, sk):
        return sk.Options(self.type, set(self.options))


class HasMethods(NamedTuple):
    """An object with these callable methods."""

    methods: tuple[str, ...]

    def is_satisfied_by(self, value) -> bool:
        return all(callable(getattr(value, m, None)) for m in self.methods)

    def to_sklearn(self, sk):
        return sk.HasMethods(list(self.methods))


def _array_like(value) -> bool:
    """scikit-learn's "array-like": has a length, a shape or ``__array__``; not a
    scalar, not a sparse matrix."""
    return ((hasattr(value, "__len__") or hasattr(value, "shape")
             or hasattr(value, "__array__")) and not np.isscalar(value) and not _sparse(value))


def _sparse(value) -> bool:
    module = type(value).__module__
    if not module.startswith("scipy.sparse"):
        return False  # (never imports SciPy: a sparse matrix has imported it already)
    from scipy.sparse import issparse

    return issparse(value)


def _random_state(value) -> bool:
    return (value is None or isinstance(value, np.random.RandomState)
            or (isinstance(value, Integral) and 0 <= value <= 2**32 - 1))


_NAMED = {
    "array-like": _array_like,
    "sparse matrix": _sparse,
    "boolean": lambda value: isinstance(value, bool | np.bool_),
    "random_state": _random_state,
    "no_validation": lambda value: True,
}


def satisfies(constraint, value) -> bool:
    """Whether ``value`` meets one constraint (scikit-learn's rules)."""
    if constraint is None:
        return value is None
    if constraint is callable:
        return callable(value)
    if isinstance(constraint, str):
        return _NAMED[constraint](value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.is_satisfied_by(value)


def check_ordered(value, name: str, item: str = "value") -> None:
    """Refuse a container that is not a sequence of one value per row: a set
    (``set``, ``frozenset``, ``dict.keys()``, ``dict.items()``), whose
    iteration order is not part of its value and follows ``PYTHONHASHSEED``
    for str ids, or a mapping or its ``values()`` view (pandas reads a dict
    by its values, ``list()`` by its keys). pandas refuses sets too."""
    if isinstance(value, Set):
        raise TypeError(f"{name} is a {type(value).__name__}, which has no order: pass a "
                        f"list, array or Series with one {item} per row.")
    if isinstance(value, Mapping | MappingView):
        raise TypeError(f"{name} is a {type(value).__name__}, not a sequence: pass a list, "
                        f"array or Series with one {item} per row.")


def python_scalar(value):
    """A NumPy bool, integer or float scalar as the Python bool, int or float
    of equal value; any other value unchanged (a ``longdouble`` too, unless a
    float equals it).

    A NumPy scalar then meets, or fails, a constraint exactly as the equal
    Python number does (``np.uint64(2**64 - 1)`` is an int beyond int64,
    ``np.True_`` a bool, ``np.float32(0.5)`` a float), and reaches the code
    that uses it as a number with Python's arithmetic (no wrap-around of
    ``-np.uint8(5)``).
    """
    if isinstance(value, np.bool_ | np.integer | np.floating):
        item = value.item()
        if isinstance(item, bool | int | float):
            return item
        as_float = float(item)  # a longdouble
        if as_float == item or math.isnan(as_float):
            return as_float
    return value


def _to_sklearn(constraint, sk):
    if hasattr(constraint, "to_sklearn"):
        return constraint.to_sklearn(sk)
    return constraint


def check_params(constraints: Mapping[str, Any], values: Mapping[str, Any],
                 caller: str) -> None:
    """Check ``values`` against ``constraints`` (a list per parameter, or
    ``"no_validation"``); scikit-learn words the error for a value that
    meets none of its parameter's constraints. A NumPy scalar is checked as
    the equal Python number (:func:`python_scalar`)."""
    for name, value in values.items():
        value = python_scalar(value)
        allowed = constraints[name]
        if allowed == "no_validation" or any(satisfies(c, value) for c in allowed):
            continue
        from . import compat as _compat

        _compat.validate_parameter_constraints(
            {name: [_to_sklearn(c, _compat) for c in allowed]}, {name: value},
            caller_name=caller)


def validate_params(constraints: Mapping[str, Any]) -> Callable:
    """Declare the constraints of a public function's parameters.

    The wrapped function checks the arguments it is given (defaults are not
    checked: they meet their constraints by construction, which a test
    verifies) before it runs. The constraints are kept as the function's
    ``_skl_parameter_constraints``, where scikit-learn keeps them, so one
    generic test checks every public function's validation.
    """
    def decorate(func: Callable) -> Callable:
        signature = inspect.signature(func)
        missing = {p.name for p in signature.parameters.values()
                   if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)} - set(constraints)
        if missing:
            raise TypeError(f"{func.__qualname__} declares no constraint for {sorted(missing)}.")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                if "group" in kwargs:  # LightGBM's habit: say what to pass instead
                    from .queries import group_hint

                    raise TypeError(f"{func.__name__}() got an unexpected keyword argument "
                                    f"'group'.{group_hint('group')}") from None
                raise
            check_params(constraints, {k: v for k, v in bound.arguments.items()
                                       if k in constraints}, func.__qualname__)
            return func(*args, **kwargs)

        wrapper._skl_parameter_constraints = dict(constraints)
        return wrapper

    return decorate
