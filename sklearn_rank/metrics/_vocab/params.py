"""The options of the metrics: defaults, constraints, documentation, conventions.

Every option a metric takes is one :class:`Param` of :data:`PARAMS` (the
shared ones are declared here, an option of one metric beside it, with
:func:`declare`): its
default, its constraints in the vocabulary of :mod:`sklearn_rank._utils.validation`
(checked without importing scikit-learn; scikit-learn words the error of a
refused value) and its numpydoc entry, from which every metric function's
Parameters section is written. :data:`CONVENTIONS` are the presets that
reproduce a peer library.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any, NamedTuple

import numpy as np

from ..._utils.validation import Interval, StrOptions, check_params, python_scalar
from .._engine.columns import gain_pairs, is_pairs
from .text import MAX_INT

__all__ = ["CONVENTIONS", "DISCOUNTS", "EMPTY", "GAINS", "MIN_DOCUMENTS", "PARAMS", "TIES",
           "Param", "check_options", "convention_options", "declare"]


GAINS = ("exponential", "linear")
DISCOUNTS = ("log2", "classic")
TIES = ("average", "stable", "pessimistic", "optimistic")
EMPTY = ("zero", "one", "skip", "nan", "raise")

#: Options each convention sets: for every metric ("*"), then per metric
#: (explicit options still win). Only the metrics a peer implements get
#: peer-specific rules; the others follow its tie order and gain.
CONVENTIONS: dict[str, dict[str, dict[str, Any]]] = {
    # (a user with one class has no AUC: roc_auc_score raises, and trec_eval has
    # no AUC whose empty rule could apply)
    "sklearn": {"*": {"gain": "linear", "ties": "average", "empty": "zero"},
                "auc": {"empty": "raise"}, "gauc": {"empty": "raise"}},
    "lightgbm": {
        "*": {"gain": "exponential", "ties": "stable"},
        "ndcg": {"empty": "one"},
        "map": {"empty": "one", "capped": True},
    },
    "xgboost": {
        "*": {"gain": "exponential", "ties": "stable"},
        "ndcg": {"empty": "one"},
        "map": {"empty": "one", "capped": True},
        "p": {"capped": True},
    },
    # Linear gain (trec_eval's default gains are the relevance levels), empty
    # queries 0. trec_eval breaks score ties by document id; arrays carry no
    # document ids, so here ties keep input order (evaluate_run sorts by id).
    "trec_eval": {"*": {"gain": "linear", "ties": "stable", "empty": "zero"},
                  "auc": {"empty": "skip"}, "gauc": {"empty": "skip"}},
}
#: The fewest documents a query may have under a convention, per metric (the
#: evaluation plan refuses a shorter one): scikit-learn's ndcg_score and
#: dcg_score raise on lists of one document ("Computing NDCG is only
#: meaningful when there is more than 1 document").
MIN_DOCUMENTS: dict[str, dict[str, int]] = {"sklearn": {"ndcg": 2, "dcg": 2}}


def convention_options(convention: str, metric: str) -> dict[str, Any]:
    """The options a convention sets for a metric."""
    preset = CONVENTIONS[convention]
    return {**preset.get("*", {}), **preset.get(metric, {})}


class Param(NamedTuple):
    """One metric option.

    Attributes
    ----------
    name : str
    default : object
        The value when neither the spec, the call nor a convention sets it.
    constraints : tuple
        What values are valid, in :mod:`sklearn_rank._utils.validation`'s vocabulary.
    doc : str
        Its numpydoc entry (``"k : int, default=None\\n    Only the top ..."``),
        written into the Parameters section of every metric function.
    """

    name: str
    default: Any
    constraints: tuple
    doc: str

    @property
    def numeric(self) -> bool:
        """Whether the option is a number (then a boolean is refused)."""
        return any(isinstance(c, Interval) for c in self.constraints)


PARAMS: dict[str, Param] = {p.name: p for p in (
    Param("k", None, (Interval(Integral, 1, None, closed="left"), None), """\
k : int, default=None
    Only the top ``k`` ranks count; None means the whole list. A ``k``
    larger than a query is clipped to its length."""),
    Param("gain", "exponential", (StrOptions(GAINS), dict, "array-like", callable, None), """\
gain : {'exponential', 'linear'}, mapping, array-like or callable, default=None
    Gain of a label l: ``'exponential'`` is 2**l - 1 (the default),
    ``'linear'`` is l; a mapping ``{label: gain}`` or an array indexed by
    integer labels (LightGBM's ``label_gain``); a callable mapping an array
    of labels to an array of gains. None takes the convention's gain, else
    ``'exponential'``."""),
    Param("discount", "log2", (StrOptions(DISCOUNTS), "array-like", callable), """\
discount : {'log2', 'classic'}, array-like or callable, default='log2'
    Discount of rank r: ``'log2'`` is 1 / log_b(r + 1) (the standard
    discount); ``'classic'`` is Järvelin & Kekäläinen's 1 / max(1, log_b r),
    under which ranks 1..b are not discounted; an array gives
    ``discount[r - 1]``; a callable maps an array of ranks to discounts."""),
    Param("log_base", 2.0, (Interval(Real, 1, None, closed="neither"),), """\
log_base : float, default=2
    The base b of the logarithm in the discount."""),
    Param("threshold", 1.0, (Interval(Real, None, None, closed="neither"),), """\
threshold : float, default=1
    A document is relevant when its label is >= threshold (trec_eval's
    ``-l``). Labels may be any real numbers, negative ones included."""),
    Param("capped", False, ("boolean",), """\
capped : bool, default=False
    Cap the denominator at what the list allows: P@k divides by min(k, n)
    for a query of n documents (XGBoost's ``pre@k``) instead of k, and
    AP@k by min(R, k) (LightGBM's and XGBoost's ``map@k``) instead of R,
    the number of relevant documents (trec_eval, ranx)."""),
    Param("max_grade", 4.0, (Interval(Real, 0, None, closed="neither"),), """\
max_grade : float, default=4
    The highest relevance grade; every label must lie in [0, max_grade]."""),
    Param("ties", "average", (StrOptions(TIES), None), """\
ties : {'average', 'stable', 'pessimistic', 'optimistic'}, default=None
    Order of documents with equal scores. ``'average'`` (the default) is the
    expected value over all orderings of tied documents (McSherry & Najork,
    2008), as :func:`sklearn.metrics.ndcg_score`; a tie group straddling the
    cut-off counts in proportion. ``'stable'`` keeps input order within a
    query (LightGBM, XGBoost). ``'pessimistic'`` / ``'optimistic'`` put the
    least / most relevant tied documents first (bounds on the metric, except
    for ``bpm``, which is not monotone in the order)."""),
    Param("empty", "zero", (StrOptions(EMPTY), None), """\
empty : {'zero', 'one', 'skip', 'nan', 'raise'}, default=None
    Value of a query without relevant documents (no positive gain, or no
    label >= threshold):
    ``'zero'`` (the default; scikit-learn, trec_eval), ``'one'`` (LightGBM,
    XGBoost), ``'skip'`` (left out of the mean), ``'nan'`` (the mean is
    NaN), ``'raise'`` (a ValueError naming the query). A mean over no
    counted query (every query empty under ``'skip'``, or weighted 0) is
    NaN, with a RuntimeWarning (torchmetrics' retrieval metrics return 0)."""),
    Param("convention", None, (StrOptions(CONVENTIONS), None), """\
convention : {'sklearn', 'lightgbm', 'xgboost', 'trec_eval'}, default=None
    Preset that reproduces a peer library's version of the metric;
    explicit options win over it. ``'sklearn'``: linear gain, tie-averaged,
    empty queries 0, and ``ndcg``/``dcg`` refuse a query with one document
    (a ValueError naming it), as :func:`sklearn.metrics.ndcg_score` does.
    ``'lightgbm'`` and ``'xgboost'``: exponential gain,
    stable ties; for NDCG and MAP empty queries score 1 (XGBoost's
    ``ndcg@k-`` / ``map@k-``: pass ``empty='zero'``), for MAP and XGBoost's
    precision ``capped=True``. ``'trec_eval'``: linear gain, empty queries
    0, ties in input order (:func:`sklearn_rank.trec.evaluate_run` breaks
    them by document id, as trec_eval)."""),
)}


def declare(param: Param) -> Param:
    """Add an option that one metric (or family) takes, declared by its family
    module beside the metric (the shared options are declared above)."""
    if param.name in PARAMS:
        raise ValueError(f"An option named {param.name!r} is declared already.")
    PARAMS[param.name] = param
    return param


def _describe(value: int) -> str:
    if value.bit_length() <= 128:
        return repr(int(value))
    return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"


def _check_number(name: str, value, caller: str) -> None:
    """The two rules scikit-learn's constraints cannot say: a numeric option
    is not a boolean (which counts as the integer 1), and integers are at most
    2**63 - 1 in absolute value (NumPy's limit). ``value`` is a Python scalar
    (:func:`python_scalar`)."""
    if PARAMS[name].numeric and isinstance(value, bool):
        raise ValueError(f"The {name!r} parameter of {caller} must be a number, got {value!r}.")
    if isinstance(value, Integral) and not isinstance(value, bool) and abs(value) > MAX_INT:
        hint = (" (a cut-off larger than a query is clipped to its length: leave k out for "
                "the whole list)" if name == "k" else " (write a float, e.g. 1e20)")
        raise ValueError(f"The {name!r} parameter of {caller} must be at most 2**63 - 1 in "
                         f"absolute value, got {_describe(value)}{hint}.")


#: The options that take a table of numbers (a mapping or a 1-D array), and
#: what its entries are.
_TABLES = {
    "gain": "gain[l] is the gain of integer label l, e.g. [0, 1, 3, 7]",
    "discount": "discount[r - 1] is the discount of rank r, e.g. [1, 0.63, 0.5]",
}


def _is_number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool | np.bool_)


def _check_gain_mapping(start: str, items) -> None:
    """A ``gain`` mapping (or list of pairs) is not empty and maps numbers to numbers."""
    if not items:
        raise ValueError(f"{start} is an empty mapping; give every label a gain (e.g. "
                         "{0: 0, 1: 1, 2: 3}).")
    for label, gain in items:
        if not (_is_number(label) and _is_number(gain)):
            bad = f"key {label!r}" if not _is_number(label) else f"value {gain!r}"
            raise ValueError(f"{start} must map labels to gains, both numbers (e.g. "
                             f"{{0: 0, 1: 1, 2: 3}}); got the {bad}.")


def _check_table(name: str, value, caller: str) -> None:
    """A ``gain`` mapping holds numbers; a ``gain`` or ``discount`` array is
    1-D and holds numbers (others fail deep inside the metric, in words that
    do not name the option, or a 2-D list of pairs reads as a mapping)."""
    if value is None or isinstance(value, str) or callable(value):
        return
    start = f"The {name!r} parameter of {caller}"
    if name == "gain" and (isinstance(value, Mapping) or is_pairs(value)):
        _check_gain_mapping(start, value.items() if isinstance(value, Mapping) else value)
        return
    if isinstance(value, Mapping):
        raise ValueError(f"{start} must be a 1-D array ({_TABLES[name]}), not a mapping.")
    try:
        array = np.asarray(value)
    except ValueError:  # ragged nested lists
        array = np.asarray(value, dtype=object)
    if array.ndim != 1:
        raise ValueError(f"{start} must be a 1-D array ({_TABLES[name]}), got an array of "
                         f"shape {array.shape}.")
    if array.dtype.kind not in "iuf" and not all(_is_number(v) for v in array.tolist()):
        raise ValueError(f"{start} must hold numbers ({_TABLES[name]}), got an array of "
                         f"dtype {array.dtype}.")


def check_options(options: Mapping[str, Any], caller: str) -> dict[str, Any]:
    """Check option values against :data:`PARAMS` (``caller`` names the
    function or spec in messages): the explicit rules of :func:`_check_number`,
    the declared constraints, then the contents of tables (:func:`_check_table`).

    Returns the options with NumPy scalars as the equal Python numbers: a
    NumPy scalar is checked, and used, as the Python number it equals.
    """
    options = {name: python_scalar(value) for name, value in options.items()}
    for name, value in options.items():
        _check_number(name, value, caller)
    check_params({name: PARAMS[name].constraints for name in options}, options, caller)
    for name, value in options.items():
        if name in _TABLES:
            _check_table(name, value, caller)
        if name == "gains" and value is not None:
            try:
                gain_pairs(value)
            except ValueError as error:
                raise ValueError(f"The 'gains' parameter of {caller}: {error}") from None
    return options
