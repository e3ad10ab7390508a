"""Inputs at the public boundary, round 3 (issue #24, items 3 and 4).

* Numeric options given as NumPy scalars (every integer and float dtype,
  ``np.bool_``) are checked and used as the equal Python number: the same
  value when valid, the same error when not (``np.uint64(2**64 - 1)`` used to
  crash in ``bit_length``). A ``gain`` mapping or table of non-numbers, or a
  2-D one, is refused naming ``gain``.
* Query ids (and the other per-row arrays) in a container with no row order
  (a set, a dict or a dict view) are refused naming the argument: which row
  got which id followed ``PYTHONHASHSEED``.
"""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

import sklearn_rank.metrics as metrics
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import (
    evaluate,
    evaluate_chunks,
    lightgbm_eval_metric,
    make_ranking_scorer,
    ndcg_score,
    parse_metric,
    precision_at_k_score,
    xgboost_eval_metric,
)
from sklearn_rank.metrics._vocab.params import PARAMS
from sklearn_rank.metrics._vocab.registry import METRICS
from sklearn_rank.model_selection import QueryKFold, QueryShuffleSplit

Y = np.array([3, 2, 1, 0, 1, 0, 2, 1, 0])
S = np.array([0.4, 0.3, 0.2, 0.1, 0.5, 0.6, 0.3, 0.2, 0.9])
Q = np.array([1, 1, 1, 1, 2, 2, 3, 3, 3])

INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
FLOATS = (np.float16, np.float32, np.float64, np.longdouble)

#: A valid value of every numeric option, held exactly by every dtype above
#: that the option takes.
VALID = {"k": 2, "log_base": 10, "threshold": 2, "max_grade": 5, "p": 0.5, "min_rel": 1,
         "max_rel": 3, "depth": 50, "target": 2, "beta": 2}
NUMERIC = sorted(name for name, p in PARAMS.items() if p.numeric)
CASES = [(name, option) for name, metric in sorted(METRICS.items())
         for option in metric.params if PARAMS[option].numeric]


def _function(name):
    return getattr(metrics, METRICS[name].function)


def _integral(option) -> bool:
    return option in ("k", "depth")


def _outcome(call, value):
    """What ``call(value)`` gives: its value (a scorer or callable metric by
    its repr), or its error's type and message."""
    try:
        result = call(value)
    except Exception as error:  # noqa: BLE001 - compared, not swallowed
        return type(error).__name__, str(error)
    if isinstance(result, float) and result != result:
        return "nan"  # (a mean with no value: AUC of one-class users only)
    return result if isinstance(result, float | metrics.Evaluation) else repr(result)


def _python(value):
    """The Python number equal to a NumPy scalar (written out, not through the
    package's own conversion)."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return float(value)


def _valid_scalars(option):
    value = VALID[option]
    dtypes = INTS if _integral(option) else FLOATS + (INTS if value == int(value) else ())
    return [dtype(value) for dtype in dtypes]


#: NumPy scalars every numeric option refuses.
REFUSED = (np.uint64(2**64 - 1), np.uint64(2**63), np.int64(-(2**63)), np.True_, np.False_,
           np.float64("nan"), np.float32("inf"), np.longdouble("-inf"))


def _edge_scalars(option):
    """NumPy scalars at the edges of an option's range (some refused)."""
    edge = [np.float16(-1), np.int8(-5), *(dtype(0) for dtype in INTS + FLOATS)]
    if _integral(option):
        edge += [dtype(2) for dtype in FLOATS]
    return edge


def test_every_numeric_option_has_a_valid_value():
    assert set(VALID) == set(NUMERIC)


@pytest.mark.parametrize(("name", "option"), CASES)
def test_a_valid_numpy_scalar_option_is_the_python_number(name, option):
    func = _function(name)
    for value in _valid_scalars(option):
        expected = func(Y, S, qid=Q, **{option: _python(value)})
        assert func(Y, S, qid=Q, **{option: value}) == pytest.approx(expected, rel=1e-12), (
            type(value).__name__)
        python = make_ranking_scorer(name, **{option: _python(value)})
        assert str(make_ranking_scorer(name, **{option: value})) == str(python)
        if option != "k":  # evaluate takes k in the spec only
            by_evaluate = evaluate(Y, S, qid=Q, metrics=[name], **{option: value}).mean[name]
            assert by_evaluate == pytest.approx(expected, rel=1e-12), type(value).__name__


@pytest.mark.parametrize(("name", "option"), CASES)
def test_a_refused_numpy_scalar_option_gets_the_python_numbers_error(name, option):
    func = _function(name)
    calls = [lambda v: func(Y, S, qid=Q, **{option: v}),
             lambda v: make_ranking_scorer(name, **{option: v}),
             lambda v: lightgbm_eval_metric(name, **{option: v})]
    if option != "k":  # evaluate takes k in the spec only
        calls.append(lambda v: evaluate(Y, S, qid=Q, metrics=[name], **{option: v}))
    for value in REFUSED + tuple(_edge_scalars(option)):
        for call in calls:
            expected = _outcome(call, _python(value))
            got = _outcome(call, value)
            assert got == expected, repr(value)
            refused = any(value is r for r in REFUSED)  # (np.int8(0) == np.False_)
            assert isinstance(expected, tuple) or not refused, repr(value)


@pytest.mark.parametrize(("call", "python"), [
    (lambda v: ndcg_score([[3, 2, 1, 0]], [[4, 3, 2, 1]], k=v), 2**64 - 1),
    (lambda v: precision_at_k_score([[3, 2, 1, 0]], [[4, 3, 2, 1]], threshold=v), 2**64 - 1),
    (lambda v: make_ranking_scorer("ndcg", k=v), 2**63),
    (lambda v: lightgbm_eval_metric("ndcg", k=v), 2**63),
    (lambda v: xgboost_eval_metric("map", k=v), 2**64 - 1),
    (lambda v: parse_metric("ndcg").with_options(k=v), 2**63),
])
def test_the_reported_uint64_options(call, python):
    """The cases of the report: an AttributeError from ``bit_length`` before."""
    with pytest.raises(ValueError, match=r"must be at most 2\*\*63 - 1 in absolute value, "
                                         rf"got {python}") as numpy_error:
        call(np.uint64(python))
    with pytest.raises(ValueError) as python_error:
        call(python)
    assert str(numpy_error.value) == str(python_error.value)


def test_numpy_scalars_are_used_with_pythons_arithmetic():
    """-np.uint8(5) wraps to 251: ERR's max_grade gave a wrong number or a
    false overflow error through evaluate."""
    for grade in (5, 200):
        expected = evaluate(Y, S, qid=Q, metrics=["err"], max_grade=grade).mean["err"]
        got = evaluate(Y, S, qid=Q, metrics=["err"], max_grade=np.uint8(grade)).mean["err"]
        assert got == pytest.approx(expected, rel=1e-12)


# -- gain and discount tables ------------------------------------------------------------

GAIN_ENTRIES = {
    "ndcg_score": lambda **o: ndcg_score(Y, S, qid=Q, **o),
    "dcg_score": lambda **o: metrics.dcg_score(Y, S, qid=Q, **o),
    "evaluate": lambda **o: evaluate(Y, S, qid=Q, metrics=["ndcg@3", "dcg"], **o),
    "make_ranking_scorer": lambda **o: make_ranking_scorer("ndcg@3", **o),
    "with_options": lambda **o: parse_metric("ndcg@3").with_options(**o),
}
BAD_GAINS = {
    "str key": ({"a": 1}, r"must map labels to gains, both numbers .*got the key 'a'"),
    "str value": ({0: 0, 1: "x"}, r"got the value 'x'"),
    "None value": ({0: 0, 1: None}, r"got the value None"),
    "empty mapping": ({}, r"is an empty mapping"),
    "2-D array": (np.ones((2, 2)), r"must be a 1-D array .*shape \(2, 2\)"),
    # a 2-D list of (label, gain) pairs was silently read as a mapping
    "2-D list": ([[0, 0], [1, 1], [2, 3], [3, 7]], r"must be a 1-D array .*shape \(4, 2\)"),
    "ragged": ([[0, 1], [2]], r"must hold numbers"),
    "strings": (["0", "1", "3", "7"], r"must hold numbers .*dtype <U1"),
    "complex": (np.array([0, 1, 3, 7j]), r"must hold numbers .*dtype complex128"),
}


@pytest.mark.parametrize("entry", sorted(GAIN_ENTRIES))
@pytest.mark.parametrize("bad", sorted(BAD_GAINS))
def test_a_bad_gain_table_is_refused_naming_gain(entry, bad):
    gain, match = BAD_GAINS[bad]
    with pytest.raises(ValueError, match=r"The 'gain' parameter of .*" + match):
        GAIN_ENTRIES[entry](gain=gain)


@pytest.mark.parametrize("entry", sorted(GAIN_ENTRIES))
@pytest.mark.parametrize(("discount", "match"), [
    (np.ones((2, 2)), r"must be a 1-D array .*shape \(2, 2\)"),
    ({1: 1.0}, r"must be a 1-D array .*not a mapping"),
    (["1", "0.5"], r"must hold numbers"),
])
def test_a_bad_discount_table_is_refused_naming_discount(entry, discount, match):
    with pytest.raises(ValueError, match=r"The 'discount' parameter of .*" + match):
        GAIN_ENTRIES[entry](discount=discount)


def test_valid_gain_tables_still_work():
    exponential = ndcg_score(Y, S, qid=Q)
    for gain in ({0: 0, 1: 1, 2: 3, 3: 7}, [0, 1, 3, 7], np.array([0.0, 1, 3, 7]),
                 (0, 1, 3, 7), {np.int64(0): np.float32(0), 1: 1, 2.0: 3, 3: 7}):
        assert ndcg_score(Y, S, qid=Q, gain=gain) == pytest.approx(exponential, rel=1e-12)
    spec = parse_metric("ndcg(gain={0: 0, 1: 1, 2: 3, 3: 7})@3")
    assert spec.with_options(k=2) == parse_metric("ndcg(gain={0: 0, 1: 1, 2: 3, 3: 7})@2")


# -- per-row arrays need an order ------------------------------------------------------

N = 6
X = np.arange(N * 2, dtype=float).reshape(N, 2)
y = np.array([0, 1, 2, 0, 1, 2])

UNORDERED = {  # one distinct or repeated id per row
    "set": lambda: {10, 20, 30, 40, 50, 60},
    "frozenset": lambda: frozenset({"a", "b", "c", "d", "e", "f"}),
    "dict_keys": lambda: {i: 0 for i in range(N)}.keys(),
    "dict_items": lambda: {i: 0 for i in range(N)}.items(),
    "dict_values": lambda: {i: i // 2 for i in range(N)}.values(),
    "dict": lambda: {i: i // 2 for i in range(N)},
}
QID_ENTRIES = {
    "ndcg_score": lambda q: ndcg_score(y, X[:, 0], qid=q),
    "evaluate": lambda q: evaluate(y, X[:, 0], qid=q, metrics=["ndcg", "map"]),
    "scorer": lambda q: make_ranking_scorer("ndcg@3")(Ridge().fit(X, y), X, y, qid=q),
    "evaluate_chunks": lambda q: evaluate_chunks([(y, X[:, 0], q)]),
    "QueryKFold.split(qid)": lambda q: list(QueryKFold(2).split(X, y, qid=q)),
    "QueryKFold.split(groups)": lambda q: list(QueryKFold(2).split(X, y, groups=q)),
    "QueryShuffleSplit.split": lambda q: list(QueryShuffleSplit(2, random_state=0)
                                              .split(X, qid=q)),
    "QueryRanker.fit": lambda q: QueryRanker(Ridge()).fit(X, y, qid=q),
}


def _message(name, container):
    kind = type(container).__name__
    why = "which has no order" if kind in ("set", "frozenset", "dict_keys",
                                            "dict_items") else "not a sequence"
    # (evaluate_chunks says which chunk first)
    return (rf"^(chunk 0 \(rows numbered within the chunk\): )?{name} is a {kind}, {why}: "
            r"pass a list, array or Series with one id per row\.$")


@pytest.mark.parametrize("entry", sorted(QID_ENTRIES))
@pytest.mark.parametrize("container", sorted(UNORDERED))
def test_query_ids_without_an_order_are_refused(entry, container):
    ids = UNORDERED[container]()
    name = "groups" if "groups" in entry else "qid"
    with pytest.raises(TypeError, match=_message(name, ids)):
        QID_ENTRIES[entry](ids)
    QID_ENTRIES[entry](list(UNORDERED[container]()))  # the same ids as a list work


@pytest.mark.parametrize("argument", ["y_true", "y_score", "sample_weight"])
@pytest.mark.parametrize("container", ["set", "dict_keys", "dict_values"])
def test_other_per_row_arrays_without_an_order_are_refused(argument, container):
    values = UNORDERED[container]()
    arrays = {"y_true": y, "y_score": X[:, 0], "sample_weight": None, argument: values}
    kind = type(values).__name__
    with pytest.raises(TypeError, match=rf"^{argument} is a {kind}, .*: pass a list, array or "
                                        r"Series with one value per row\.$"):
        ndcg_score(arrays["y_true"], arrays["y_score"], qid=[1, 1, 1, 2, 2, 2],
                   sample_weight=arrays["sample_weight"])
