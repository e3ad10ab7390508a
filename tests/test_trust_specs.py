"""Spec strings of any size: every string gives a MetricSpec or a ValueError,
fast (issue 12, item 7)."""

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score as sklearn_ndcg

from sklearn_rank.metrics import evaluate, ndcg_score, parse_metric, precision_at_k_score
from sklearn_rank.metrics._vocab.text import MAX_INT, MAX_LENGTH
from sklearn_rank.trec import evaluate_run

# its canonical spelling has a space after every comma
LONGEST_LIST = "ndcg(gain=[" + ",".join(["1"] * ((MAX_LENGTH - 12) // 3)) + "])"


@pytest.mark.parametrize("text, match", [
    # huge cut-offs (NumPy's "ufunc 'isfinite' not supported" before)
    ("ndcg@9999999999999999999999", r"'k' parameter .* at most 2\*\*63 - 1 .* leave k out"),
    (f"ndcg@{MAX_INT + 1}", r"at most 2\*\*63 - 1"),
    ("ndcg(k=1000000000000000000000000000)", r"at most 2\*\*63 - 1"),
    ("P.99999999999999999999999", r"at most 2\*\*63 - 1"),
    ("ndcg@1" + "0" * 1500, r"holds a number of 1501 digits \(at most 100\)"),
    ("p(threshold=" + "9" * 40 + ")", r"'threshold' parameter .*\(write a float"),
    ("err(max_grade=10000000000000000000000000000000000)", r"'max_grade' .* at most 2\*\*63"),
    # sizes and nesting (RecursionError, MemoryError before)
    ("ndcg" + ".a" * 10000, r"too long: at most 2000 characters"),
    ("-" * 100000 + "ndcg", r"too long"),
    ("ndcg(gain=[" + "1," * 200000 + "])", r"too long.*gain=array"),
    ("-" * 1990 + "ndcg", r"Could not parse"),
    ("ndcg" + ".a" * 990, r"Could not parse"),
    ("(" * 300 + "ndcg" + ")" * 300, r"Could not parse"),
    ("ndcg(gain=" + "[" * 150 + "]" * 150 + ")", r"value of 'gain' must be a literal"),
    ("ndcg(gain=" + "ndcg(gain=" * 150 + "1" + ")" * 151, r"value of 'gain' must be a literal"),
    ("ndcg(log_base=" + "-" * 1900 + "2)", r"'log_base'"),
    # expressions are not evaluated: no power, no repetition
    ("ndcg(log_base=10**10**10)", r"value of 'log_base' must be a literal"),
    ("ndcg(gain=[1]*10**9)", r"value of 'gain' must be a literal"),
    # literal shapes options cannot take
    ("ndcg(gain={1, 2})", r"must be a literal"),
    ("ndcg(gain=[[1]])", r"must be a literal.*no nesting"),
    ("ndcg(gain={0: [1]})", r"must be a literal"),
    ("ndcg(gain={(1, [2]): 1})", r"must be a literal"),  # TypeError inside literal_eval
    ("ndcg(gain=['a', 'b'])", r"must be a literal"),
    ("ndcg(gain=[1e999, 2])", r"finite numbers"),
    ("ndcg(gain={0: float('nan')})", r"must be a literal"),
    ("ndcg(gain=b'x')", r"must be a literal"),
    ("ndcg(log_base=1j)", r"must be a literal"),
    ("ndcg(gain=[])", r"value of 'gain' is empty"),
    ("ndcg(gain={})", r"value of 'gain' is empty"),
    ("ndcg(gain=[True, 2])", r"must be a literal"),
    # characters
    ("ndcğ@10", r"non-ASCII character 'ğ' \(position 3\)"),
    ("ｎｄｃｇ@10", r"non-ASCII"),  # Python would read it as ndcg (NFKC)
    ("ndcg\udcff@10", r"non-ASCII"),
    ("ndcg\x00@10", r"Could not parse"),
    ("ndcg#10", r"holds '#' \(position 4\); write the cut-off after '@'"),  # not 'ndcg'
    ("ndcg@10 # x", r"holds '#'"),
    # cut-offs that are not integers >= 1
    ("ndcg@-1", r"cut-off after '@' must be an integer >= 1"),
    ("ndcg@1.5", r"cut-off after '@' must be an integer >= 1"),
    ("ndcg@True", r"cut-off after '@' must be an integer >= 1"),
    ("ndcg(k=True)", r"'k' parameter .* must be a number, got True"),
    ("ndcg(k=0)", r"'k' parameter"),
    # repeated options (the last one silently won before)
    ("ndcg(gain='linear', gain='exponential')", r"gives option 'gain' twice"),
    ("ndcg(gain='linear', GAIN='linear')", r"gives option 'gain' twice"),
    ("", r"Could not parse"),
    ("P." + ",".join(["5"] * 900), r"stands for 900 metrics \(p@5, p@5, p@5, p@5, p@5, \.\.\.\)"),
])
def test_pathological_specs_raise_value_error(text, match):
    with pytest.raises(ValueError, match=match) as error:
        parse_metric(text)
    assert len(str(error.value)) < 600  # the spec is shortened in the message


def test_long_spec_is_shortened_in_messages():
    with pytest.raises(ValueError) as error:
        parse_metric("zz" * 900)
    assert "... (1800 characters)" in str(error.value)


def test_largest_cutoff_is_the_whole_list():
    y = np.array([[3, 2, 3, 0, 1, 2]])
    s = np.array([[0.1, 0.5, 0.3, 0.9, 0.2, 0.4]])
    spec = parse_metric(f"ndcg(gain='linear')@{MAX_INT}")
    assert spec.k == MAX_INT
    expected = sklearn_ndcg(y, s)
    assert ndcg_score(y, s, k=MAX_INT, gain="linear") == pytest.approx(expected, abs=1e-12)
    ev = evaluate(y.ravel(), s.ravel(), qid=[0] * 6, metrics=[spec])
    assert ev.mean[spec] == pytest.approx(expected, abs=1e-12)
    assert precision_at_k_score(y, s, k=MAX_INT) == 5 / MAX_INT  # 5 relevant, k ranks


def test_huge_cutoffs_through_the_public_functions_and_trec(tmp_path):
    y, s = np.array([[1, 0, 2]]), np.array([[0.3, 0.2, 0.1]])
    for k in (MAX_INT + 1, 2**64, 10**30):
        with pytest.raises(ValueError, match=r"'k' parameter of ndcg_score must be at most"):
            ndcg_score(y, s, k=k)
    with pytest.raises(ValueError, match=r"'k' parameter of ndcg_score must be a number"):
        ndcg_score(y, s, k=True)
    with pytest.raises(ValueError, match=r"at most 2\*\*63 - 1"):
        evaluate_run({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["P.99999999999999999999"])


def test_plain_numbers_still_parse():
    assert str(parse_metric("ndcg(log_base=1e20)")) == "ndcg(log_base=1e+20)"
    assert str(parse_metric("p(threshold=-3)@5")) == "p(threshold=-3)@5"
    assert str(parse_metric("ndcg(gain=(0, 1, 3))")) == "ndcg(gain=[0, 1, 3])"
    assert parse_metric(LONGEST_LIST).params[0][1] == (1,) * ((MAX_LENGTH - 12) // 3)
    with pytest.raises(ValueError, match=r"too long once written canonically \(2993 char"):
        parse_metric("ndcg(gain=[" + ",".join(["1"] * 994) + "])")
    with pytest.raises(ValueError, match=r"too long once written canonically"):
        parse_metric("ndcg(gain=[" + ",".join(["1e14"] * 300) + "])")  # 100000000000000
    assert parse_metric("(" * 150 + "ndcg" + ")" * 150 + "@3").k == 3


# Hypothesis: random text and random spec-like text.

SPEC_TOKENS = [
    "ndcg", "map", "p", "err", "mrr", "recall", "gmap", "NDCG", "ndcg_cut", "P", "map_cut",
    "success", "@", "@", "(", ")", "=", ",", "-", "--", ".", "_", " ", "[", "]", "{", "}",
    ":", "k", "gain", "discount", "log_base", "ties", "empty", "threshold", "capped",
    "max_grade", "convention", "'linear'", "'exponential'", "'classic'", "'stable'",
    "'zero'", "'one'", "'trec_eval'", "1", "2", "10", "0", "-1", "1.5", "1e999", "1e-9",
    "9" * 25, "True", "None", "**", "*", "'", '"', "#", "\x00", "\n", "ｎ", "0x1f", "1_0",
    "lambda", "j", "nan", "inf", "not ", "...", "b'x'", "\\",
]
spec_like = st.lists(st.sampled_from(SPEC_TOKENS), max_size=40).map("".join)
options = st.sampled_from(["gain='linear'", "gain=[0, 1, 3]", "gain={0: 0, 1: 2.5}",
                           "discount='classic'", "log_base=10", "ties='stable'",
                           "empty='one'", "threshold=2", "capped=True", "max_grade=3",
                           "convention='lightgbm'", "k=5"])
well_formed = st.builds(
    lambda name, opts, k, minus: (name + (f"({', '.join(opts)})" if opts else "")
                                  + (f"@{k}" if k is not None else "") + minus),
    st.sampled_from(["ndcg", "dcg", "map", "p", "err", "mrr", "hit_rate", "f1"]),
    st.lists(options, max_size=3, unique=True),
    st.one_of(st.none(), st.integers(-5, MAX_INT + 5)),
    st.sampled_from(["", "-"]),
)


def _result_or_value_error(text):
    try:
        spec = parse_metric(text)
    except ValueError as error:
        assert str(error)
        return None
    # an accepted spec prints canonically and parses back to itself
    again = parse_metric(str(spec))
    assert again == spec and str(again) == str(spec)
    return spec


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=3000))
def test_random_text(text):
    _result_or_value_error(text)


@settings(max_examples=500, deadline=None)
@given(st.one_of(spec_like, well_formed, st.builds("".join, st.lists(
    st.sampled_from(["-", "(", ")", "[", "]", ".a", "@1", "+", "ndcg"]), max_size=3000))))
def test_random_spec_like_text(text):
    _result_or_value_error(text)


@settings(max_examples=200, deadline=None)
@given(well_formed)
def test_well_formed_specs_parse_or_name_the_problem(text):
    spec = _result_or_value_error(text)
    if spec is not None and "@" in text and "k=" not in text:
        assert spec.k == int(text.split("@")[1].rstrip("-"))


WORST = [
    LONGEST_LIST,
    "-" * (MAX_LENGTH - 4) + "ndcg",
    "ndcg" + "@1" * ((MAX_LENGTH - 4) // 2),
    ",".join(["1"] * (MAX_LENGTH // 2)),
    "ndcg" + ".a" * ((MAX_LENGTH - 4) // 2),
    "ndcg(log_base=" + "+-" * ((MAX_LENGTH - 20) // 2) + "1)",
    "(" * 199 + "ndcg" + ")" * 199,
    "x" * MAX_LENGTH,
    "P." + ",".join(["5"] * ((MAX_LENGTH - 2) // 2)),
    "-" * (10 * MAX_LENGTH),
]


def test_worst_strings_are_fast():
    """A loose bound (about 50 times the time measured on a loaded machine):
    it catches a hang or quadratic growth, not noise."""
    start = time.perf_counter()
    for i in range(200):
        _result_or_value_error(WORST[i % len(WORST)])
    assert time.perf_counter() - start < 60
