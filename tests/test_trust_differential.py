"""Every registered metric and option against an independent naive reference.

``tests/_naive.py`` implements DESIGN §3 one query at a time in plain Python
(exact fractions, ties averaged over every ordering by brute force). Here
hypothesis draws small random data (a few queries of 1-11 documents, integer,
fractional, large or negative labels, tied scores, int or str query ids, rows
shuffled, per-row weights, the 2-D layout) and a random metric with random
options, taken from the registry so that a metric or option added later is
drawn too, and checks that the package gives the reference's numbers (within
1e-9, relative) or raises ValueError exactly when the reference finds the
input invalid. Four ways in are checked: the public function, the options in
the spec string, the options passed to :func:`evaluate`, and several metrics
in one :func:`evaluate` call (which must equal each metric alone).

CI runs a fixed set of examples (``derandomize``); for a long random run::

    SKLEARN_RANK_DIFFERENTIAL_EXAMPLES=20000 python -m pytest -q \\
        tests/test_trust_differential.py --hypothesis-show-statistics
"""

import itertools
import math
import os
import warnings
from fractions import Fraction

import _naive as naive
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, reject, settings
from hypothesis import strategies as st

import sklearn_rank.metrics as metrics_module
from sklearn_rank.metrics import evaluate, get_metric_names, parse_metric
from sklearn_rank.metrics._vocab.params import CONVENTIONS, DISCOUNTS, EMPTY, GAINS, PARAMS, TIES
from sklearn_rank.metrics._vocab.registry import METRICS

# Examples per metric: 36 in CI (about 500 in all, a fixed set); the variable
# sets the total of a long random run.
_LONG = int(os.environ.get("SKLEARN_RANK_DIFFERENTIAL_EXAMPLES", "0"))
_SETTINGS = settings(max_examples=max(1, _LONG // len(METRICS)) if _LONG else 36,
                     deadline=None, derandomize=not _LONG, database=None,
                     suppress_health_check=list(HealthCheck))
RTOL = 1e-9
# Random data often leaves every query empty: those warnings are tested elsewhere.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::RuntimeWarning")


# -- the registry is covered -------------------------------------------------------


def test_every_registered_metric_and_option_has_a_reference():
    for name in get_metric_names():
        assert name in naive.KERNELS, f"{name!r} has no reference in tests/_naive.py"
        assert set(METRICS[name].params) == naive.METRIC_PARAMS[name], name
        assert dict(METRICS[name].defaults) == naive.METRIC_DEFAULTS.get(name, {}), name
    for option, param in PARAMS.items():
        assert option in OPTIONS, f"no strategy draws option {option!r}"
        assert naive.DEFAULTS[option] == param.default, option
    assert set(CONVENTIONS) == set(naive.CONVENTIONS)
    assert (set(TIES), set(EMPTY), set(GAINS), set(DISCOUNTS)) == (
        set(naive.TIES), set(naive.EMPTY), set(naive.GAINS), set(naive.DISCOUNTS))


# -- callables (named, so that failures print readably) -------------------------------


def square_gain(labels):
    return labels**2


def sqrt_gain(labels):
    return np.sqrt(labels)


def shifted_gain(labels):  # label 0 has a gain: no query is empty
    return 3 * labels + 1


def negative_gain(labels):  # invalid for label 0
    return labels - 1


def inverse_rank(ranks):
    return 1.0 / ranks


def inverse_sqrt_rank(ranks):
    return 1 / np.sqrt(ranks)


def top_three(ranks):
    return np.where(ranks <= 3, 1.0, 0.0)


def negative_discount(ranks):  # invalid
    return -1.0 / ranks


# -- strategies -------------------------------------------------------------------------

_GAIN_VALUES = [0, 0.5, 1, 3, 7, 15, 100]
_mapping = st.builds(
    lambda values, extra, drop: {key: v for key, v in {**dict(enumerate(values)), **extra}.items()
                                 if key != drop},
    st.lists(st.sampled_from(_GAIN_VALUES), min_size=5, max_size=5),
    st.dictionaries(st.sampled_from([0.5, 1.5, 2.5]), st.sampled_from(_GAIN_VALUES)),
    st.sampled_from([None] * 4 + [0, 3]))
OPTIONS = {
    "k": st.sampled_from([None, None, 1, 2, 3, 4, 5, 8, 15, 0]),
    "gain": st.one_of(
        st.sampled_from(GAINS), _mapping,
        st.lists(st.sampled_from(_GAIN_VALUES), min_size=3, max_size=7),  # label_gain
        st.sampled_from([square_gain, sqrt_gain, shifted_gain, negative_gain])),
    "discount": st.one_of(
        st.sampled_from(DISCOUNTS),
        st.lists(st.sampled_from([0, 0.25, 1 / 3, 0.5, 1, 2]), min_size=1, max_size=12),
        st.just([1, -0.5, 0.5, 0.25, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]),
        st.sampled_from([inverse_rank, inverse_sqrt_rank, top_three, negative_discount])),
    "log_base": st.sampled_from([2, 2.0, math.e, 3, 1.5, 10, 1]),
    "ties": st.sampled_from(TIES),
    "empty": st.sampled_from(EMPTY),
    "convention": st.sampled_from(sorted(CONVENTIONS)),
    "threshold": st.sampled_from([1, 1.0, 2, 3, 0, 0.5, 2.5, -1, -0.5]),
    "capped": st.booleans(),
    "max_grade": st.sampled_from([4, 4.0, 5, 4.5, 3, 1, 0.5, 1100]),
    "p": st.sampled_from([0.8, 0.5, 0.9, 0.95, 0.1, 0.99, 0, 1, 1.5, -0.5]),
    "depth": st.sampled_from([1000, 1, 2, 3, 5, 8, 20, 0, 100_001]),
    "min_rel": st.sampled_from([0, 0.0, 1, -1, 0.5, 2, 4]),
    "max_rel": st.sampled_from([4, 4.0, 3, 1, 2.5, 0, 10]),
    "target": st.sampled_from([1.0, 1, 2, 0.5, 3.5, 0, -1]),
    "residual": st.booleans(),
    "gains": st.sampled_from([None, None, "1=3,2=9", "0=1,1=5", "2=0.5,2=7", "3=0", "1=-1"]),
    "beta": st.sampled_from([1.0, 1, 0.5, 2.0, 3.7, 0, -1.5]),
}
_LABELS = {
    "int": [0, 1, 2, 3, 4],
    "fractional": [0, 0.5, 1, 1.5, 2.5, 4],
    "large": [0, 1, 4, 1000, 1023, 1024, 1100],
    "huge": [0, 1, 1e300, 1.5e308],
    "negative": [-1, -0.5, 0, 1, 2, 3],
}


@st.composite
def datasets(draw):
    """``(y_true, y_score, qid, sample_weight)``: flat rows in random order
    with int or str query ids, or the 2-D layout (qid None)."""
    two_d = draw(st.integers(0, 3)) == 0
    n_queries = draw(st.integers(1, 4))
    short = st.integers(1, 7)
    if two_d:
        lengths = [draw(short)] * n_queries
    else:
        lengths = draw(st.lists(st.one_of(short, short, short, st.integers(8, 11)),
                                min_size=n_queries, max_size=n_queries))
    pool = _LABELS[draw(st.sampled_from(["int"] * 5 + sorted(_LABELS)))]
    scores_kind = draw(st.sampled_from(["tied"] * 5 + ["distinct"] * 4 + ["huge int"]))
    labels, scores = [], []
    for n in lengths:
        labels.append(draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)))
        if n > 7 or scores_kind == "distinct":  # long queries: tie groups of two at most
            ranks = draw(st.permutations(range(n)))
            scores.append([r // 2 if n > 7 and scores_kind != "distinct" else r / 7
                           for r in ranks])
        elif scores_kind == "tied":
            scores.append(draw(st.lists(st.sampled_from([0.0, 0.5, 0.5, 2.0]),
                                        min_size=n, max_size=n)))
        else:  # integers above 2**53, which float64 cannot tell apart
            scores.append([2**60 + s for s in draw(st.lists(st.integers(0, 2), min_size=n,
                                                            max_size=n))])
    weights = draw(st.sampled_from([None] * 4 + [[0, 0.5, 1, 2, 3.25], [1, 2], [0, 1], [-1, 1]]))
    bad = draw(st.sampled_from([None] * 40 + [math.nan, math.inf, -math.inf]))
    if bad is not None:  # one NaN or infinite label or score
        (labels if draw(st.booleans()) else scores)[0][0] = bad
    if two_d:
        w = None if weights is None else draw(st.lists(st.sampled_from(weights),
                                                       min_size=n_queries, max_size=n_queries))
        return labels, scores, None, w
    ids = draw(st.lists(st.integers(-5, 60), min_size=n_queries, max_size=n_queries,
                        unique=True))
    if draw(st.booleans()):
        ids = [f"q{i}" if i % 3 else str(i) for i in ids]
    qid = [ids[i] for i, n in enumerate(lengths) for _ in range(n)]
    y = [v for row in labels for v in row]
    s = [v for row in scores for v in row]
    order = draw(st.permutations(range(len(y))))
    w = None if weights is None else draw(st.lists(st.sampled_from(weights), min_size=len(y),
                                                   max_size=len(y)))
    y, s, qid = [y[i] for i in order], [s[i] for i in order], [qid[i] for i in order]
    if draw(st.booleans()):
        y, s, qid = np.array(y), np.array(s), np.array(qid)
    return y, s, qid, w


@st.composite
def metric_specs(draw, name=None, literal=False):
    """``(name, k, explicit options)`` for a registered metric (any, or
    ``name``); ``literal``: only values a spec string can hold (no callables)."""
    name = draw(st.sampled_from(get_metric_names())) if name is None else name
    params = {}
    for param in METRICS[name].params:
        if draw(st.integers(0, 2)) == 0:
            value = draw(OPTIONS[param])
            if not (literal and callable(value)):
                params[param] = value
    return name, params.pop("k", None), params


def spec_string(name, k, params, minus=False):
    """``name(option=value, ...)@k``, with the '-' suffix for ``empty='zero'``."""
    params = dict(params)
    minus = minus and params.get("empty") == "zero"
    if minus:
        del params["empty"]
    text = name
    if params:
        text += "(" + ", ".join(f"{p}={v!r}" for p, v in sorted(params.items())) + ")"
    if k is not None:
        text += f"@{k}"
    return text + ("-" if minus else "")


# -- comparison ---------------------------------------------------------------------------


def _same(got, expected):
    if math.isnan(expected):
        return math.isnan(got)
    return math.isclose(got, expected, rel_tol=RTOL, abs_tol=0.0)


def _reference(data, specs, options=None):
    y, s, qid, w = data
    try:
        return naive.evaluate(y, s, qid, specs, options, w)
    except naive.Invalid as exc:
        event(f"invalid: {exc}")
        return exc
    except naive.Unsupported as exc:
        event(f"not computable by the reference: {exc}")
        reject()


def _run(call, expected, what):
    """The package's result, or None when it rightly raised ValueError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(expected, naive.Invalid):
            with pytest.raises(ValueError):
                call()
                pytest.fail(f"{what}: no ValueError, the reference says {expected}")
            return None
        try:
            return call()
        except ValueError as exc:
            if any(r.may_refuse for r in expected):
                event("refused (extreme magnitudes)")
                return None
            raise AssertionError(f"{what}: ValueError on valid input: {exc}") from exc


def _check_evaluation(ev, keys, expected, data):
    qids = list(range(len(data[0]))) if data[2] is None else sorted(set(np.asarray(
        data[2]).tolist()))
    assert ev.qids.tolist() == qids
    for key, ref in zip(keys, expected, strict=True):
        assert _same(ev.mean[key], ref.mean), (key, ev.mean[key], ref.mean)
        got = ev.per_query[key].tolist()
        assert all(_same(a, b) for a, b in zip(got, ref.per_query, strict=True)), (
            key, got, ref.per_query)
        assert ev.n_empty[key] == ref.n_empty, key


def _evaluate(data, specs, options):
    y, s, qid, w = data
    return evaluate(y, s, qid=qid, metrics=specs, sample_weight=w, **options)


def _several(data, dataset, name):
    """Several metrics in one evaluate() call: the reference's numbers, and
    bit for bit the numbers of each metric alone."""
    specs = data.draw(st.lists(metric_specs(literal=True), min_size=1, max_size=3).map(
        lambda more: [data.draw(metric_specs(name, literal=True)), *more]), "specs")
    options = data.draw(st.fixed_dictionaries({}, optional={
        p: OPTIONS[p] for p in METRICS[name].params if p != "k"}), "options")
    texts = [spec_string(*spec, minus=True) for spec in specs]
    expected = _reference(dataset, specs, options)
    meaning = {}
    for text, (spec_name, _, params) in zip(texts, specs, strict=True):
        if isinstance(expected, naive.Invalid):
            break
        key, resolved = str(parse_metric(text)), naive.resolve(spec_name, params, options)
        if meaning.setdefault(key, resolved) != resolved:
            # Explicit defaults print as nothing, so evaluate's options make two
            # specs with one spelling differ: refused (documented), never merged.
            event("refused: two meanings under one spelling")
            with pytest.raises(ValueError, match="print as"):
                _evaluate(dataset, texts, options)
            return
    ev = _run(lambda: _evaluate(dataset, texts, options), expected, f"{texts} {options}")
    if ev is None:
        return
    _check_evaluation(ev, texts, expected, dataset)
    for text, spec in zip(texts, specs, strict=True):
        own = {p: v for p, v in options.items() if p in METRICS[spec[0]].params}
        alone = _evaluate(dataset, [text], own)
        np.testing.assert_array_equal(alone.per_query[text], ev.per_query[text])
        np.testing.assert_array_equal(alone.mean[text], ev.mean[text])  # NaN equals NaN


@pytest.mark.parametrize("name", get_metric_names())
@_SETTINGS
@given(data=st.data())
def test_metric_equals_naive_reference(name, data):
    dataset = data.draw(datasets(), "data")
    path = data.draw(st.sampled_from(["function", "spec", "options", "several"]), "path")
    event(f"path: {path}")
    if path == "several":
        return _several(data, dataset, name)
    _, k, params = data.draw(metric_specs(name), "metric")
    expected = _reference(dataset, [(name, k, params)])
    if path == "function":
        y, s, qid, w = dataset
        function = getattr(metrics_module, METRICS[name].function)
        kwargs = params if k is None else {**params, "k": k}
        got = _run(lambda: function(y, s, qid=qid, sample_weight=w, **kwargs), expected,
                   f"{function.__name__}(**{kwargs})")
        if got is not None:
            assert type(got) is float
            assert _same(got, expected[0].mean), (got, expected[0].mean)
        return
    if path == "spec":
        literal = {p: v for p, v in params.items() if not callable(v)}
        options = {p: v for p, v in params.items() if callable(v)}
        text = spec_string(name, k, literal, minus=data.draw(st.booleans(), "minus"))
    else:
        options = params
        text = spec_string(name, k, {})
    ev = _run(lambda: _evaluate(dataset, [text], options), expected, f"{text} {options}")
    if ev is not None:
        _check_evaluation(ev, [text], expected, dataset)


# -- the reference itself against published numbers (DESIGN §7) --------------------


@pytest.mark.parametrize("name, params, y, s, expected", [
    ("ndcg", {"gain": "linear"}, [[3, 2, 3, 0, 1, 2]], [[6, 5, 4, 3, 2, 1]], 0.960808),
    ("ndcg", {}, [[3, 2, 3, 0, 1, 2]], [[6, 5, 4, 3, 2, 1]], 0.948811),
    ("ndcg", {"gain": "linear", "discount": "classic"}, [[3, 2, 3, 0, 1, 2]],
     [[6, 5, 4, 3, 2, 1]], 0.931509),
    ("ndcg", {"gain": "linear"}, [[1, 0, 0, 0]], [[1, 1, 1, 0]], 0.710310),
    ("ndcg", {"convention": "lightgbm"}, [[1, 0, 0, 0]], [[1, 1, 1, 0]], 1.0),
    ("err", {}, [[4, 0, 2]], [[3, 2, 1]], 0.941406),
    ("map", {}, [[1, 0, 1, 0]], [[4, 3, 2, 1]], 0.833333),
    ("bpref", {}, [[1, 0, 1, 0]], [[4, 3, 2, 1]], 0.75),
    ("rank_eff", {}, [[1, 0, 1, 0]], [[4, 3, 2, 1]], 0.75),
])
def test_reference_gives_the_published_numbers(name, params, y, s, expected):
    (result,) = naive.evaluate(y, s, None, [(name, None, params)])
    assert result.mean == pytest.approx(expected, abs=5e-7)


@pytest.mark.parametrize("name", get_metric_names())
def test_reference_tie_average_is_the_mean_over_every_permutation(name):
    """The reference's 'average' (distinct label sequences of each tie group)
    equals the plain mean over all n! orderings of a fully tied query."""
    labels, spec = [0, 1, 1, 3, 2, 0], (name, 3 if "k" in METRICS[name].params else None, {})
    (average,) = naive.evaluate([labels], [[1.0] * 6], None, [spec])
    per_order = []
    for order in itertools.permutations(labels):  # scores decreasing: no ties
        (one,) = naive.evaluate([list(order)], [[6.0, 5, 4, 3, 2, 1]], None, [spec])
        per_order.append(Fraction(one.mean))
    assert average.mean == pytest.approx(float(sum(per_order) / len(per_order)), rel=1e-12)


# -- known discrepancies: minimal reproducers -----------------------------------------


def _against_reference(name, y, s, qid=None, **params):
    """The function gives the reference's number (or, for extreme magnitudes,
    may refuse with a ValueError)."""
    (expected,) = naive.evaluate(y, s, qid, [(name, params.pop("k", None), params)])
    function = getattr(metrics_module, METRICS[name].function)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = function(y, s, qid=qid, **params)
        except ValueError:
            if expected.may_refuse:
                return
            raise
    assert _same(got, expected.mean), (got, expected.mean)


# Discrepancies the differential test found, fixed since (issue 12): kept as
# regression tests.


def test_found_integer_scores_above_2_53_rank_exactly():
    _against_reference("mrr", [[0, 1]], [[2**60, 2**60 + 1]])


def test_found_err_with_a_large_max_grade():
    _against_reference("err", [[1000, 0]], [[2, 1]], max_grade=1100)


def test_found_ndcg_of_gains_near_the_float64_limit():
    _against_reference("ndcg", [1023] * 3, [3, 2, 1], qid=[1] * 3)


def test_found_mean_of_values_near_the_float64_limit():
    _against_reference("cg", [1.5e308, 1.5e308], [1, 1], qid=[1, 2], gain="linear")


def test_found_discount_array_as_long_as_the_query():
    _against_reference("dcg", [[1] * 9], [list(range(9))], discount=[1] * 9)
