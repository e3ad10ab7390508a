"""Metric names for experiment trackers (sklearn_rank.metrics._vocab.names.safe_name): only
lower-case letters, digits and underscores, and different specs never share one."""

import dataclasses
import itertools
import re

import numpy as np
import pytest

from sklearn_rank.metrics import evaluate, get_metric_names, parse_metric
from sklearn_rank.metrics._vocab.names import safe_name

#: What MLflow accepts in a metric key (mlflow.utils.validation: letters, digits,
#: underscores, dashes, periods, spaces, slashes; at most 250 characters), and
#: the rule of this module, which is stricter.
MLFLOW_KEY = re.compile(r"[\w\-. /]{1,250}")
SAFE = re.compile(r"[a-z][a-z0-9_]*")

#: Values of every option, the awkward ones included (negative numbers, floats
#: with exponents, lists and dicts spelling the same numbers, None).
VALUES = {
    "gain": ["'exponential'", "'linear'", "None", "[0, 1, 3]", "[0.5, 1, 3]", "[0, 1]",
             "[0, 0, 1, 1, 2, 3]", "{0: 0, 1: 1, 2: 3}", "{0: 0, 1: 1.5}", "[2]"],
    "discount": ["'log2'", "'classic'", "[1, 0.5]", "[1, 0.5, 0.25]", "[1]", "[2]"],
    "log_base": ["2", "2.5", "10", "25", "1e20", "1.5", "1e-05"],
    "ties": ["'average'", "'stable'", "'pessimistic'", "'optimistic'", "None"],
    "empty": ["'zero'", "'one'", "'skip'", "'nan'", "'raise'", "None"],
    "convention": ["'sklearn'", "'lightgbm'", "'xgboost'", "'trec_eval'", "None"],
    "threshold": ["-1", "0", "0.5", "1", "2", "25", "2.5", "1e-05", "-0.5", "1e20"],
    "capped": ["True", "False"],
    "max_grade": ["1", "4", "4.5", "10", "45"],
    "p": ["0.5", "0.8", "0.95"],  # rank-biased precision's persistence, where registered
}


def _texts():
    """Spec texts of every metric with no option, one, or two, several cut-offs,
    with and without the '-' suffix."""
    for name in get_metric_names():
        for k, minus in [("", ""), ("@1", ""), ("@5", ""), ("@10", ""), ("@100", ""),
                         ("@10", "-"), ("", "-")]:
            yield f"{name}{k}{minus}"
            for option, values in VALUES.items():
                for value in values:
                    yield f"{name}({option}={value}){k}{minus}"
        for (o1, v1), (o2, v2) in itertools.combinations(
                [(o, v) for o, vs in VALUES.items() for v in vs[:4]], 2):
            if o1 != o2:
                yield f"{name}({o1}={v1}, {o2}={v2})@5"


@pytest.fixture(scope="module")
def canonical():
    """The distinct canonical specs of every text that parses."""
    specs = {}
    for text in _texts():
        try:
            spec = parse_metric(text)
        except (ValueError, TypeError):
            continue  # an option the metric does not take, a value out of range
        specs[str(spec)] = spec
    return specs


def test_many_specs_are_generated(canonical):
    assert len(canonical) > 2500
    for part in ("-", "@", "[", "{", "e+20", "=-1", "e-05", "True", "False"):
        assert any(part in c for c in canonical), part


def test_names_are_safe_and_injective_on_canonical_specs(canonical):
    names = {}
    for text, spec in canonical.items():
        name = safe_name(text)
        assert SAFE.fullmatch(name), (text, name)
        assert MLFLOW_KEY.fullmatch(name), (text, name)
        assert safe_name(spec) == name  # a MetricSpec gives the name of its spelling
        assert str(parse_metric(text)) == text  # canonical spellings read back as such
        assert names.setdefault(name, text) == text, (
            f"{text!r} and {names[name]!r} share the name {name!r}")
    assert len(names) == len(canonical)


def test_the_rule():
    cases = {
        "ndcg@10": "ndcg_at_10",
        "ndcg(gain='linear')@10": "ndcg_gain_linear_at_10",
        "ndcg@10-": "ndcg_at_10_minus",
        "ndcg-": "ndcg_minus",
        "map": "map",
        "hit_rate@3": "hit_rate_at_3",
        "p(threshold=2)@5": "p_threshold_2_at_5",
        "p(threshold=-1)@5": "p_threshold_neg1_at_5",
        "p(threshold=0.5)@5": "p_threshold_0p5_at_5",
        "p(threshold=1e-05)@5": "p_threshold_1eneg05_at_5",
        "p(capped=True)@5": "p_capped_true_at_5",
        "ndcg(discount='classic', log_base=1e+20)": "ndcg_discount_classic_log_base_1e20",
        "ndcg(gain=[0, 0, 1, 1, 2, 3])@3": "ndcg_gain_list_0_0_1_1_2_3_at_3",
        "ndcg(gain={0: 0, 1: 1, 2: 3})@3": "ndcg_gain_dict_0_0_1_1_2_3_at_3",
        "ndcg(convention='trec_eval')@10": "ndcg_convention_trec_eval_at_10",
        "err(max_grade=4.5)@20": "err_max_grade_4p5_at_20",
    }
    for spec, name in cases.items():
        assert str(parse_metric(spec)) == spec  # each is canonical
        assert safe_name(spec) == name


def test_other_spellings_are_made_canonical_first():
    assert safe_name(" ndcg @ 10") == safe_name("ndcg@10") == "ndcg_at_10"
    # ir_measures' spellings mean ir_measures' metrics (issue 14): another name
    assert safe_name("NDCG@10") == safe_name("nDCG@10") == "irm_ndcg_at_10"
    assert safe_name("RBP(p=0.5,rel=2)") == "irm_rbp_p_0p5_rel_2"
    assert safe_name("ndcg_cut.10") == "ndcg_gain_linear_at_10"  # trec_eval's name
    assert safe_name("P.5") == "p_at_5"
    assert safe_name("ndcg(discount='classic', gain='linear')") == \
        safe_name("ndcg(gain='linear', discount='classic')")
    # an explicit default is the spec without it (one key in an Evaluation)
    assert safe_name("err(max_grade=4)@20") == "err_at_20"


def test_a_callable_option_is_named_by_its_name():
    def MyGain(labels):  # noqa: N802 (a name with capitals)
        return labels

    spec = dataclasses.replace(parse_metric("ndcg@10"), params=(("gain", MyGain),))
    assert str(spec) == "ndcg(gain=<MyGain>)@10"
    assert safe_name(spec) == safe_name(str(spec)) == "ndcg_gain_fn_mygain_at_10"


def test_the_keys_of_an_evaluation_get_distinct_names():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(20), 8)
    y = rng.integers(0, 4, qid.shape[0])
    metrics = ["ndcg@10", "ndcg(gain='linear')@10", "ndcg@10-", "ndcg(gain=[0, 1, 3, 7])@10",
               "ndcg(gain={0: 0, 1: 1, 2: 3, 3: 7})@10", "p(threshold=2)@5", "p@5", "map",
               "map@10", "mrr", "err@20", "recall@100", "hit_rate@1"]
    ev = evaluate(y, rng.normal(size=y.shape), qid=qid, metrics=metrics)
    keys = list(dict(ev.mean))
    names = [safe_name(key) for key in keys]
    assert len(set(names)) == len(keys) == len(metrics)
    assert names[:4] == ["ndcg_at_10", "ndcg_gain_linear_at_10", "ndcg_at_10_minus",
                         "ndcg_gain_list_0_1_3_7_at_10"]


@pytest.mark.parametrize("text", ["", "ndcg@", "ndcg@0", "not a spec", "ndcg(gain=)@10",
                                  "<lambda>", "ndcg(gain=<f>, 1)@10"])
def test_text_that_is_no_spec_is_refused(text):
    with pytest.raises(ValueError):
        safe_name(text)


def test_evaluation_to_dict_keys_means_by_spec_or_safe_name():
    rng = np.random.default_rng(3)
    y, s, q = rng.integers(0, 3, 60), rng.random(60), np.repeat(np.arange(6), 10)
    specs = ["ndcg@10", "ndcg(gain='linear')@10", "map", "p(threshold=2)@5"]
    ev = evaluate(y, s, qid=q, metrics=specs)
    by_spec, by_safe = ev.to_dict(), ev.to_dict(names="safe")
    assert list(by_spec) == [str(parse_metric(m)) for m in specs]
    assert list(by_safe) == ["ndcg_at_10", "ndcg_gain_linear_at_10", "map",
                             "p_threshold_2_at_5"]
    for spec in specs:  # each value is the metric's own mean, a plain float
        assert by_spec[str(parse_metric(spec))] == by_safe[safe_name(spec)] == ev.mean[spec]
        assert type(by_safe[safe_name(spec)]) is float
    with pytest.raises(ValueError, match="names must be 'spec' or 'safe'"):
        ev.to_dict(names="mlflow")
