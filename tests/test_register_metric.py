"""Metrics users write themselves (``register_metric``): a few lines give the
built-in numbers through every entry point, every tie policy (checked against
brute-force enumeration of the orders of tied documents too), empty queries,
weights, and the refusals.

The user metrics reimplement DCG@k (gain 2**l - 1), precision@k and reciprocal
rank, so each is compared with its built-in twin per query, ``rel=1e-12``
(the user's sums run in another order than the kernels'). Registrations are
context managers (or restored by :func:`_restored`), so nothing leaks into
other tests.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import itertools
import json
import os
import pickle
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from _registry import registry_restored

from sklearn_rank.metrics import (
    evaluate,
    evaluate_chunks,
    get_metric_names,
    make_ranking_scorer,
    register_metric,
)
from sklearn_rank.metrics._custom_kernel import MAX_ORDERS
from sklearn_rank.metrics._vocab import registry
from sklearn_rank.trec import evaluate_run

REL = 1e-12
TIES = ("average", "stable", "pessimistic", "optimistic")

# The functions of the user metrics, and the plugin module of the command-line and
# entry-point tests, which registers them.
FUNCTIONS = '''\
import numpy as np

from sklearn_rank.metrics import register_metric


def my_dcg(labels):
    """DCG with gain 2**l - 1 and discount 1 / log2(r + 1)."""
    ranks = np.arange(1, labels.size + 1)
    return float(np.sum((2.0**labels - 1) / np.log2(ranks + 1)))


def my_p(labels, k, threshold):
    """Precision@k: relevant documents in the top k / k."""
    return float(np.sum(labels >= threshold)) / (labels.size if k is None else k)


def my_rr(labels, threshold):
    """Reciprocal rank of the first relevant document (0 if none)."""
    hits = np.flatnonzero(labels >= threshold)
    return 1.0 / (hits[0] + 1) if hits.size else 0.0
'''
PLUGIN = FUNCTIONS + '''
register_metric({dcg!r}, my_dcg, additive=True)
register_metric({p!r}, my_p, additive=True)
register_metric({rr!r}, my_rr)
'''
_namespace: dict = {}
exec(FUNCTIONS, _namespace)
my_dcg, my_p, my_rr = _namespace["my_dcg"], _namespace["my_p"], _namespace["my_rr"]


def my_dcg_block(labels, lengths):
    """DCG of every row of a padded block (zero beyond ``lengths``)."""
    discount = 1 / np.log2(np.arange(2, labels.shape[1] + 2))
    return ((2.0**labels - 1) * discount).sum(axis=1)


#: user spec -> built-in spec with the same per-query values
TWINS = {"my_dcg@3": "dcg@3", "my_dcg": "dcg", "my_p@3": "p@3", "my_p": "p", "my_rr@4": "mrr@4",
         "my_rr": "mrr", "my_dcg_enum@3": "dcg@3", "my_dcg_block@3": "dcg@3",
         "my_p(threshold=2)@2": "p(threshold=2)@2", "my_rr(threshold=3)": "mrr(threshold=3)"}


@contextlib.contextmanager
def _registered():
    with contextlib.ExitStack() as stack:
        for name, func, kwargs in (("my_dcg", my_dcg, {"additive": True}),
                                   ("my_p", my_p, {"additive": True}),
                                   ("my_rr", my_rr, {}),
                                   ("my_dcg_enum", my_dcg, {}),
                                   ("my_dcg_block", my_dcg_block,
                                    {"vectorized": True, "additive": True})):
            stack.enter_context(register_metric(name, func, **kwargs))
        yield


@pytest.fixture
def registered():
    before = set(get_metric_names())
    with _registered():
        yield
    assert set(get_metric_names()) == before  # nothing leaks


def _data(seed=0):
    """Flat rows with tied integer scores, a query without a relevant document
    (q03) and one of a single document (q00)."""
    rng = np.random.default_rng(seed)
    lengths = [1, 4, 7, 3, 8, 5, 6, 2, 9, 4]
    qid = np.repeat([f"q{i:02d}" for i in range(len(lengths))], lengths)
    y = rng.integers(0, 4, qid.shape[0]).astype(float)
    y[qid == "q03"] = 0
    s = rng.integers(0, 4, qid.shape[0]).astype(float)
    return y, s, qid


@pytest.fixture(scope="module")
def data():
    return _data()


def _same(evaluation, pairs=None):
    for mine, builtin in (TWINS.items() if pairs is None else pairs):
        assert evaluation.n_empty[mine] == evaluation.n_empty[builtin]
        np.testing.assert_allclose(evaluation.per_query[mine], evaluation.per_query[builtin],
                                   rtol=REL, atol=1e-15, err_msg=mine)
        assert evaluation.mean[mine] == pytest.approx(evaluation.mean[builtin], rel=REL)


def _specs():
    return [*TWINS, *TWINS.values()]


# -- every tie policy, empty queries, weights --------------------------------------------


@pytest.mark.parametrize("ties", TIES)
def test_every_tie_policy_equals_the_builtin(registered, data, ties):
    y, s, q = data
    _same(evaluate(y, s, qid=q, metrics=_specs(), ties=ties))
    # and written in the spec, with the other options
    spec = f"my_dcg(ties={ties!r}, empty='one')@3"
    ev = evaluate(y, s, qid=q, metrics=[spec, f"dcg(ties={ties!r}, empty='one')@3"])
    np.testing.assert_allclose(*ev.per_query.values(), rtol=REL)


def _orders(scores: np.ndarray):
    """Every ranking of one query's documents by decreasing score (each order of
    the tied ones), as permutations of their indices."""
    levels = sorted(set(scores.tolist()), reverse=True)
    groups = [np.flatnonzero(scores == level).tolist() for level in levels]
    for pick in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [i for group in pick for i in group]


@pytest.mark.parametrize("spec", ["my_dcg@3", "my_dcg_enum@3", "my_dcg_enum", "my_p@2",
                                  "my_rr", "my_rr@2", "my_dcg_block@4"])
def test_average_is_the_mean_over_every_order_of_tied_documents(registered, spec):
    """ties='average' equals the mean of the metric over every order of the
    tied documents (each ranked without ties, by brute force)."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 8))
        y = rng.integers(0, 4, n).astype(float)
        y[0] = max(y[0], 1)  # (a relevant document: no empty query)
        s = rng.integers(0, 3, n).astype(float)
        each = [evaluate([y[order]], [np.arange(n, 0, -1.0)], metrics=[spec]).mean[spec]
                for order in _orders(s)]
        got = evaluate([y], [s], metrics=[spec], ties="average").mean[spec]
        assert got == pytest.approx(np.mean(each), rel=REL, abs=1e-15), (y, s)


@pytest.mark.parametrize("empty", ["zero", "one", "skip", "nan"])
def test_empty_queries_follow_the_policy_and_never_reach_the_function(data, empty):
    y, s, q = data
    calls = []

    def checked(labels):
        """DCG that notes a call on a query without a relevant document."""
        if not (labels >= 1).any():  # (the whole query: the spec has no cut-off)
            calls.append(labels)
        return my_dcg(labels)

    for ties in TIES:
        with register_metric("my_checked", checked, additive=True):
            ev = evaluate(y, s, qid=q, metrics=["my_checked", "dcg"], empty=empty, ties=ties)
        assert calls == []
        assert ev.n_empty["my_checked"] == ev.n_empty["dcg"] == 1
        np.testing.assert_allclose(ev.per_query["my_checked"], ev.per_query["dcg"], rtol=REL)
        assert ev.mean["my_checked"] == pytest.approx(ev.mean["dcg"], rel=REL, nan_ok=True)


def test_empty_raise_and_threshold(registered, data):
    y, s, q = data
    with pytest.raises(ValueError, match=r"my_dcg\(empty='raise'\)@3: 1 of 10 queries .* "
                                         "query 'q03'"):
        evaluate(y, s, qid=q, metrics=["my_dcg(empty='raise')@3"])
    # a threshold no label reaches: every query is empty, as for the built-in
    with pytest.warns(UserWarning, match="threshold=9"):
        ev = evaluate(y, s, qid=q, metrics=["my_dcg(threshold=9)", "dcg"])
    assert ev.n_empty["my_dcg(threshold=9)"] == 10


def test_sample_weight(registered, data):
    y, s, q = data
    weights = np.repeat(np.arange(1.0, 11.0), np.unique(q, return_counts=True)[1])
    ev = evaluate(y, s, qid=q, metrics=_specs(), sample_weight=weights)
    _same(ev)
    plain = evaluate(y, s, qid=q, metrics=["my_dcg@3"]).mean["my_dcg@3"]
    assert ev.mean["my_dcg@3"] != pytest.approx(plain, rel=1e-6)  # the weights count


def test_two_dimensional_input_and_rows_in_any_order(registered, data):
    y, s, q = data
    perm = np.random.default_rng(1).permutation(y.shape[0])
    _same(evaluate(y[perm], s[perm], qid=q[perm], metrics=_specs()))
    _same(evaluate([[3, 2, 3, 0, 1, 2]], [[6, 5, 4, 3, 2, 1]], metrics=_specs()))


# -- every entry point ---------------------------------------------------------------------


def test_evaluate_chunks(registered, data):
    y, s, q = data
    chunks = [(y[i:i + 7], s[i:i + 7], q[i:i + 7]) for i in range(0, len(y), 7)]
    whole = evaluate(y, s, qid=q, metrics=_specs())
    chunked = evaluate_chunks(chunks, metrics=_specs())
    _same(chunked)
    for key, values in whole.per_query.items():
        np.testing.assert_allclose(chunked.per_query[key], values, rtol=REL, err_msg=key)


def test_make_ranking_scorer(registered, data):
    y, s, q = data

    class Scores:  # an estimator whose predictions are X's only column
        def predict(self, X):
            return np.asarray(X)[:, 0]

    for mine, builtin in TWINS.items():
        got = make_ranking_scorer(mine)(Scores(), s[:, None], y, qid=q)
        assert got == pytest.approx(make_ranking_scorer(builtin)(Scores(), s[:, None], y,
                                                                 qid=q), rel=REL)
    with_option = make_ranking_scorer("my_dcg@3", ties="pessimistic")
    assert with_option(Scores(), s[:, None], y, qid=q) == pytest.approx(
        make_ranking_scorer("dcg@3", ties="pessimistic")(Scores(), s[:, None], y, qid=q),
        rel=REL)


def test_dask(registered, data):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from sklearn_rank.dask import evaluate as dask_evaluate

    y, s, q = data
    frame = pd.DataFrame({"label": y, "score": s, "qid": q})
    ev = dask_evaluate(dd.from_pandas(frame, npartitions=3), metrics=_specs())
    _same(ev)
    want = evaluate(y, s, qid=q, metrics=_specs())
    for key, values in want.per_query.items():
        np.testing.assert_allclose(ev.per_query[key], values, rtol=REL, err_msg=key)


def _trec_files(tmp_path, data):
    """The qrels and run of the flat rows, plus an unjudged retrieved document
    and a judged one the run missed in some queries."""
    y, s, q = data
    docs = [f"d{i}" for i in range(len(y))]
    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("".join(f"{qi} 0 {d} {int(v)}\n" for qi, d, v in zip(q, docs, y,
                                                                          strict=True))
                     + "q01 0 missed 3\nq05 0 missed 1\n")
    run.write_text("".join(f"{qi} Q0 {d} {r} {float(sc)!r} tag\n"
                           for r, (qi, d, sc) in enumerate(zip(q, docs, s, strict=True)))
                   + "q02 Q0 unjudged 99 2.0 tag\n")
    return qrels, run


@pytest.mark.parametrize("ties", TIES)
def test_evaluate_run(tmp_path, registered, data, ties):
    qrels, run = _trec_files(tmp_path, data)
    _same(evaluate_run(str(qrels), str(run), _specs(), ties=ties))
    # -l 2 sets the threshold: the user metrics' and the binary built-ins'
    binary = {mine: builtin for mine, builtin in TWINS.items() if builtin[0] in "pm"}
    _same(evaluate_run(str(qrels), str(run), [*binary, *binary.values()], relevance_level=2,
                       ties=ties), binary.items())


def _env(*paths) -> dict:
    return {**os.environ,
            "PYTHONPATH": os.pathsep.join([*map(str, paths), os.environ.get("PYTHONPATH", "")])}


def _cli(*args, env=None, status=0):
    done = subprocess.run([sys.executable, "-m", "sklearn_rank", *args], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == status, done.stderr
    return done


def _plugin(tmp_path, module="my_metrics", **names):
    names = {"dcg": "my_dcg", "p": "my_p", "rr": "my_rr", **names}
    (tmp_path / f"{module}.py").write_text(PLUGIN.format(**names))
    return module


CLI_TWINS = {"my_dcg@3": "dcg@3", "my_p@3": "p@3", "my_rr": "mrr", "my_dcg(ties='stable')@5":
             "dcg(ties='stable')@5", "my_p(ties='pessimistic')": "p(ties='pessimistic')"}


def _check_json(stdout, twins):
    doc = json.loads(stdout)["runs"]["tag"]
    for mine, builtin in twins.items():
        assert doc["per_query"][mine].keys() == doc["per_query"][builtin].keys()
        for qid, value in doc["per_query"][builtin].items():
            assert doc["per_query"][mine][qid] == pytest.approx(value, rel=REL), (mine, qid)
        assert doc["mean"][mine] == pytest.approx(doc["mean"][builtin], rel=REL)


def test_cli_evaluate_and_compare_with_plugin(tmp_path, data):
    qrels, run = _trec_files(tmp_path, data)
    module = _plugin(tmp_path)
    measures = [a for spec in [*CLI_TWINS, *CLI_TWINS.values()] for a in ("-m", spec)]
    done = _cli("evaluate", str(qrels), str(run), *measures, "-q", "--format", "json",
                "--plugin", module, env=_env(tmp_path))
    _check_json(done.stdout, CLI_TWINS)
    # the same from the path of the module's file, for compare
    done = _cli("compare", str(qrels), str(run), str(run), "-m", "my_dcg@3", "-m", "dcg@3",
                "--resamples", "10", "--format", "markdown", "--plugin",
                str(tmp_path / f"{module}.py"))
    rows = {line.split("|")[1].strip(): float(line.split("|")[3])
            for line in done.stdout.splitlines() if line.startswith("| ")
            and "dcg@3" in line.split("|")[1]}
    assert rows["my_dcg@3"] == pytest.approx(rows["dcg@3"], abs=5e-5)
    assert "--plugin" in _cli("evaluate", "--help").stdout


@pytest.mark.parametrize("source, message", [
    ("raise RuntimeError('boom')\n", "RuntimeError: boom"),
    ("def broken(:\n", "SyntaxError"),
    ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
    (None, "ModuleNotFoundError: No module named 'bad_plugin'"),
])
def test_cli_bad_plugin_is_one_line_and_status_2(tmp_path, data, source, message):
    qrels, run = _trec_files(tmp_path, data)
    if source is not None:
        (tmp_path / "bad_plugin.py").write_text(source)
    for command in (["evaluate", str(qrels), str(run)],
                    ["compare", str(qrels), str(run), str(run)]):
        done = _cli(*command, "-m", "map", "--plugin", "bad_plugin", env=_env(tmp_path),
                    status=2)
        assert done.stdout == ""
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "--plugin" in lines[0] and message in lines[0], done.stderr
        assert lines[0].startswith(f"sklearn-rank {command[0]}: error:")


def test_cli_unknown_metric_names_register_metric(tmp_path, data):
    qrels, run = _trec_files(tmp_path, data)
    done = _cli("evaluate", str(qrels), str(run), "-m", "my_dcg@3", status=2)
    assert "register_metric" in done.stderr and "--plugin" in done.stderr
    assert len(done.stderr.splitlines()) == 1


# -- the entry-point group -----------------------------------------------------------------


def _distribution(tmp_path, entry_points: str, name="sklearn_rank_test_plugin"):
    """A fake installed distribution in ``tmp_path`` with these entry points."""
    info = tmp_path / f"{name}-1.0.dist-info"
    info.mkdir()
    info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    info.joinpath("entry_points.txt").write_text(textwrap.dedent(entry_points))


ENTRY_POINTS = """\
    [sklearn_rank.metrics]
    ep_dcg = ep_metrics
    ep_p = ep_metrics
    ep_rr = ep_setup:setup
    ep_broken = ep_broken
    ep_nothing = ep_nothing
    """


def _installed(tmp_path):
    _plugin(tmp_path, "ep_metrics", dcg="ep_dcg", p="ep_p", rr="ep_rr_unused")
    (tmp_path / "ep_setup.py").write_text(textwrap.dedent("""\
        from sklearn_rank.metrics import register_metric


        def setup():
            from ep_metrics import my_rr
            register_metric("ep_rr", my_rr)
        """))
    (tmp_path / "ep_broken.py").write_text("raise RuntimeError('broken plugin')\n")
    (tmp_path / "ep_nothing.py").write_text("")
    _distribution(tmp_path, ENTRY_POINTS)


def test_entry_points_load_when_a_name_is_first_used(tmp_path, monkeypatch, data):
    y, s, q = data
    _installed(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    twins = {"ep_dcg@3": "dcg@3", "ep_p@3": "p@3", "ep_rr": "mrr"}
    with registry_restored():
        for module in ("ep_metrics", "ep_setup", "ep_broken"):
            monkeypatch.delitem(sys.modules, module, raising=False)
        assert "ep_dcg" not in get_metric_names()  # not imported before a name is used
        _same(evaluate(y, s, qid=q, metrics=[*twins, *twins.values()]), twins.items())
        assert {"ep_dcg", "ep_p", "ep_rr"} <= set(get_metric_names())
        with pytest.raises(ValueError, match=r"entry point ep_broken = ep_broken of group "
                                             r"'sklearn_rank.metrics' failed to load: "
                                             "RuntimeError: broken plugin"):
            evaluate(y, s, qid=q, metrics=["ep_broken"])
        with pytest.raises(ValueError, match="registered no metric 'ep_nothing'"):
            evaluate(y, s, qid=q, metrics=["ep_nothing@3"])
    for module in ("ep_metrics", "ep_setup", "ep_broken", "ep_nothing"):
        sys.modules.pop(module, None)
    assert "ep_dcg" not in get_metric_names()


def test_entry_point_metric_in_another_process(tmp_path, monkeypatch, data):
    """A scorer pickled for a worker process finds an installed metric there by
    its name (the worker has not imported the plugin)."""
    from sklearn.linear_model import LinearRegression

    y, s, q = data
    _installed(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    X = np.column_stack([s, np.arange(s.shape[0]) % 3])
    model = LinearRegression().fit(X, y)
    with registry_restored():
        scorer = make_ranking_scorer("ep_dcg@3")
        want = scorer(model, X, y, qid=q)
        assert want == pytest.approx(make_ranking_scorer("dcg@3")(model, X, y, qid=q), rel=REL)
        payload = pickle.dumps((scorer, model, X, y, q))
    for module in ("ep_metrics", "ep_setup"):
        sys.modules.pop(module, None)
    worker = ("import pickle, sys; "
              "scorer, model, X, y, q = pickle.loads(sys.stdin.buffer.read()); "
              "print(repr(scorer(model, X, y, qid=q)))")
    done = subprocess.run([sys.executable, "-c", worker], input=payload, capture_output=True,
                          env=_env(tmp_path), timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    assert float(done.stdout) == pytest.approx(want, rel=REL)


def test_entry_points_on_the_command_line(tmp_path, data):
    _installed(tmp_path)
    qrels, run = _trec_files(tmp_path, data)
    twins = {"ep_dcg@3": "dcg@3", "ep_p@3": "p@3", "ep_rr": "mrr"}
    measures = [a for spec in [*twins, *twins.values()] for a in ("-m", spec)]
    done = _cli("evaluate", str(qrels), str(run), *measures, "-q", "--format", "json",
                env=_env(tmp_path))
    _check_json(done.stdout, twins)
    done = _cli("evaluate", str(qrels), str(run), "-m", "ep_broken", env=_env(tmp_path),
                status=2)
    assert len(done.stderr.splitlines()) == 1 and "broken plugin" in done.stderr


# -- the refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize("name, message", [
    ("ndcg", "'ndcg' is a registered metric"),
    ("precision", "'precision' is an alias of a registered metric"),
    ("num_ret", "'num_ret' is a trec_eval measure"),
    ("infap", "'infAP' is a trec_eval measure"),
    ("ndcg_cut", "'ndcg_cut' is a trec_eval measure"),
    ("setp", "'SetP' is an ir_measures measure"),
    ("precision_ia", None),  # (free: no vocabulary has it)
    ("mrr_", None),
    ("ndcg10", "reads as a metric with a cut-off"),
    ("p_5", "reads as a metric with a cut-off"),
    ("My", "is not a metric name"),
    ("1x", "is not a metric name"),
    ("my-metric", "is not a metric name"),
    ("my metric", "is not a metric name"),
    ("for", "is not a metric name"),
    ("", "is not a metric name"),
    ("x" * 65, "is not a metric name"),
])
def test_bad_or_taken_names_are_refused(name, message):
    before = dict(registry.METRICS)
    if message is None:
        with register_metric(name, my_dcg) as registration:
            assert registration.name == name
            assert evaluate([[1, 0]], [[2, 1]], metrics=[name]).mean[name] == 1.0
    else:
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            register_metric(name, my_dcg)
    assert registry.METRICS == before


def test_a_name_is_registered_once_and_not_after_the_block():
    with register_metric("my_once", my_dcg):
        with pytest.raises(ValueError, match="'my_once' is a registered metric"):
            register_metric("my_once", my_p)
    assert "my_once" not in get_metric_names()
    with pytest.raises(RuntimeError), register_metric("my_once", my_dcg):
        raise RuntimeError  # unregistered whatever ends the block
    assert "my_once" not in get_metric_names()
    with pytest.raises(ValueError, match="Unknown metric 'my_once'"):
        evaluate([[1, 0]], [[2, 1]], metrics=["my_once"])


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="'func' parameter of register_metric must be a "
                                         "callable"):
        register_metric("my_x", 3.0)
    with pytest.raises(ValueError, match="'additive' parameter"):
        register_metric("my_x", my_dcg, additive="yes")
    with pytest.raises(ValueError, match="Metric 'my_x' has no parameter 'gain'"):
        with register_metric("my_x", my_dcg):
            evaluate([[1, 0]], [[2, 1]], metrics=["my_x(gain='linear')"])


@pytest.mark.parametrize("value, vectorized, message", [
    (lambda labels: float("nan"), False, r"returned nan for query 'q05'"),
    (lambda labels: np.inf, False, r"returned inf for query 'q05'"),
    (lambda labels: [1.0, 2.0], False, r"returned \[1.0, 2.0\] for query 'q05'; its function "
                                       "must return one number per query"),
    (lambda labels: "high", False, r"returned 'high' for query 'q05'"),
    (lambda labels, lengths: np.ones((labels.shape[0], 2)), True,
     r"returned shape \(\d+, 2\) for a block of \d+ queries \(the first: query 'q\d\d'\)"),
    (lambda labels, lengths: np.where(labels[:, 0] == 7, np.nan, 1.0), True,
     r"returned nan for query 'q05'"),
])
def test_bad_values_name_the_metric_and_the_query(value, vectorized, message):
    y = np.array([1, 0, 1, 0, 7, 1.0])
    q = np.array(["q01", "q01", "q02", "q05", "q05", "q09"])

    def func(labels, *rest):
        if not vectorized and labels[0] == 7:
            return value(labels)
        return value(labels, *rest) if vectorized else 1.0

    for ties in ("stable", "average"):
        with register_metric("my_bad", func, vectorized=vectorized):
            with pytest.raises(ValueError, match="Metric 'my_bad' .*" + message):
                evaluate(y, np.arange(6.0), qid=q, metrics=["my_bad"], ties=ties)


def test_too_many_orders_name_ties_stable():
    y = np.tile([1.0, 0.0], 10)  # 20 tied documents, C(20, 10) = 184756 label orders
    s = np.zeros(20)
    q = np.repeat(["big"], 20)
    with register_metric("my_enum", my_rr), register_metric("my_add", my_dcg, additive=True):
        with pytest.raises(ValueError, match=rf"more than {MAX_ORDERS} orders of the tied "
                                             r"documents of query 'big'\. Pass "
                                             r"ties='stable'.*additive=True"):
            evaluate(y, s, qid=q, metrics=["my_enum"])
        # a cut-off leaves fewer orders to tell apart: the 2**4 prefixes of 4 ranks
        assert evaluate(y, s, qid=q, metrics=["my_enum@4"]).mean["my_enum@4"] == (
            pytest.approx(evaluate(y, s, qid=q, metrics=["mrr@4"]).mean["mrr@4"], rel=REL))
        ev = evaluate(y, s, qid=q, metrics=["my_add", "dcg", "my_enum"], ties="stable")
        assert ev.mean["my_add"] == pytest.approx(ev.mean["dcg"], rel=REL)
        assert ev.mean["my_enum"] == 1.0
        additive = evaluate(y, s, qid=q, metrics=["my_add", "dcg"])  # averaged per position
        assert additive.mean["my_add"] == pytest.approx(additive.mean["dcg"], rel=REL)


def test_the_function_gets_a_copy_and_the_cut_off():
    seen = []

    def spoil(labels, k):
        """Writes into its labels."""
        seen.append((labels.copy(), k))
        labels[:] = 100.0
        return 0.0

    y, s = [[3, 0, 1, 2]], [[4, 3, 2, 1]]
    with register_metric("my_spoil", spoil):
        ev = evaluate(y, s, metrics=["my_spoil@2", "dcg@2", "my_spoil"])
    assert ev.mean["dcg@2"] == pytest.approx(7.0, rel=REL)  # the block is intact
    np.testing.assert_array_equal(seen[0][0], [3, 0])
    assert seen[0][1] == 2 and seen[1][1] is None


# -- the documentation pages, followed to the letter -------------------------------------

DOCS = Path(__file__).parents[1] / "docs"
# the console script `sklearn-rank` (no current directory on sys.path: python -P)
PROGRAM = [sys.executable, "-P", "-c",
           "import sys; from sklearn_rank.cli._entry import program; sys.exit(program())"]


def _code_blocks(page: Path) -> list[tuple[str, str | None, str]]:
    """``(language, caption, text)`` of every ``code-block`` of a page."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        directive = re.match(r"\.\. code-block:: (\S+)", lines[i])
        i += 1
        if directive is None:
            continue
        caption = None
        while i < len(lines) and lines[i].startswith("   :"):
            option = re.match(r"   :caption: (.+)", lines[i])
            caption = option.group(1) if option else caption
            i += 1
        body = []
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith("   ")):
            body.append(lines[i])
            i += 1
        out.append((directive.group(1), caption, textwrap.dedent("\n".join(body)).strip("\n")
                    + "\n"))
    return out


def _console(block: str, cwd: Path, *paths) -> None:
    """Run a console block's command (``$ sklearn-rank ...``) and compare its
    output with the block's."""
    command, *shown = block.rstrip("\n").split("\n")
    args = shlex.split(command.removeprefix("$ "))
    assert args[0] == "sklearn-rank"
    done = subprocess.run([*PROGRAM, *args[1:]], capture_output=True, text=True, cwd=cwd,
                          env=_env(*paths), timeout=300)
    assert done.returncode == 0, done.stderr
    assert [line.rstrip() for line in done.stdout.rstrip("\n").split("\n")] == shown


def test_user_guide_page_followed_to_the_letter(tmp_path):
    page = DOCS / "user_guide" / "custom_metrics.rst"
    # its doctests, in a fresh namespace
    test = doctest.DocTestParser().get_doctest(page.read_text(encoding="utf-8"),
                                               {"__name__": "__main__"}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    with registry_restored():
        runner.run(test, out=out.write)
    assert runner.failures == 0 and runner.tries > 20, out.getvalue()
    # its files and commands: --plugin, then an installed package's entry point
    blocks = _code_blocks(page)
    files = {caption: text for _, caption, text in blocks if caption}
    consoles = [text for language, _, text in blocks if language == "console"]
    assert len(consoles) == 2
    work = tmp_path / "work"
    work.mkdir()
    for name in ("my_metrics.py", "qrels.txt", "run.txt"):
        (work / name).write_text(files[name])
    _console(consoles[0], work)
    site = tmp_path / "site"
    site.mkdir()
    (work / "my_metrics.py").rename(site / "my_metrics.py")
    _distribution(site, _entry_points_txt(files["pyproject.toml"]), name="my_metrics_package")
    _console(consoles[1], work, site)


def _entry_points_txt(pyproject: str) -> str:
    """The entry_points.txt that installing a package with this pyproject.toml
    ``[project.entry-points."group"]`` table writes (tomllib is Python 3.11+)."""
    out = []
    for line in pyproject.splitlines():
        table = re.fullmatch(r'\[project\.entry-points\."([^"]+)"\]', line.strip())
        entry = re.fullmatch(r'(\S+)\s*=\s*"([^"]+)"', line.strip())
        if table:
            out.append(f"[{table.group(1)}]")
        elif entry:
            out.append(f"{entry.group(1)} = {entry.group(2)}")
    assert out[0] == "[sklearn_rank.metrics]" and len(out) > 1, pyproject
    return "\n".join(out) + "\n"


def _insert_import(text: str, line: str) -> str:
    """``line`` (``from ._families.x import ...``) among the family imports of
    metrics/__init__.py, in sorted order."""
    lines = text.split("\n")
    at = next((i for i, old in enumerate(lines) if old.startswith("from ._families.")
               and old > line), None)
    if at is None:
        at = lines.index("document_metrics()")
    return "\n".join([*lines[:at], line, *lines[at:]])


def test_contributor_page_followed_to_the_letter(tmp_path):
    """The page's steps applied to a copy of the package: the new metric is in the
    registry, its function exported and documented, its doctest and the page's
    test pass, and the tests derived from the registry take it in."""
    page = DOCS / "contributing" / "adding_a_metric.rst"
    files = {caption: text for _, caption, text in _code_blocks(page)}
    root = Path(__file__).parents[1]
    skip = shutil.ignore_patterns("__pycache__", "_build", "generated", "auto_examples")
    shutil.copytree(root / "sklearn_rank", tmp_path / "sklearn_rank", ignore=skip)
    shutil.copytree(root / "docs", tmp_path / "docs", ignore=skip)
    (tmp_path / "tests").mkdir()
    for name in ("test_one_name.py", "test_docs.py", "test_metrics.py", "_registry.py"):
        shutil.copy(root / "tests" / name, tmp_path / "tests" / name)
    # 1. the module
    family = "sklearn_rank/metrics/_families/mean_gain.py"
    (tmp_path / family).write_text(files[family])
    # 2. the export
    init = tmp_path / "sklearn_rank/metrics/__init__.py"
    text = _insert_import(init.read_text(), files["sklearn_rank/metrics/__init__.py"].strip())
    text = text.replace("__all__ = [\n", "__all__ = [\n    "
                        + files["sklearn_rank/metrics/__init__.py, __all__"], 1)
    init.write_text(text)
    # 3. the API page, in the list of its section
    api = tmp_path / "docs/api/index.rst"
    entry = files["docs/api/index.rst, Gain-based metrics"].strip()
    lines = api.read_text().split("\n")
    at = next(i for i in range(lines.index("Gain-based metrics"), len(lines))
              if lines[i].startswith(".. autosummary::"))
    at = next(i for i in range(at, len(lines)) if re.fullmatch(r" {3}\w+", lines[i]))
    while re.fullmatch(r" {3}\w+", lines[at]):  # after the section's last entry
        at += 1
    api.write_text("\n".join([*lines[:at], f"   {entry}", *lines[at:]]))
    # 4. the test of the definition
    with open(tmp_path / "tests/test_metrics.py", "a") as tests:
        tests.write("\n\n" + files["tests/test_metrics.py"])
    # 5. the tables
    (tmp_path / "maint_tools").mkdir()
    shutil.copy(root / "maint_tools" / "metric_tables.py", tmp_path / "maint_tools")
    shutil.copy(root / "README.md", tmp_path)
    consoles = [text for language, _, text in _code_blocks(page) if language == "console"]
    command = shlex.split(consoles[0].strip().removeprefix("$ "))
    assert command[0] == "python"
    for args in (command[1:], [*command[1:], "--check"]):
        done = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True,
                              text=True, env=_env(tmp_path), timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "mean_gain@k" in (tmp_path / "README.md").read_text()
    assert "mean_gain@k" in (tmp_path / "docs/user_guide/conventions.rst").read_text()
    check = ("import sys; sys.path.insert(0, 'tests'); import sklearn_rank.metrics as m; "
             "from test_docs import missing_names; "
             "assert m.__file__.startswith(sys.argv[1]), m.__file__; "
             "assert 'mean_gain' in m.get_metric_names() and 'mean_gain_score' in m.__all__; "
             "assert missing_names(open('docs/api/index.rst').read()) == []")
    done = subprocess.run([sys.executable, "-c", check, str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--doctest-modules",
         family, "tests/test_metrics.py", "tests/test_one_name.py", "-k",
         "mean_gain or covers_every or keys_are"],
        cwd=tmp_path, capture_output=True, text=True, env=_env(tmp_path), timeout=600)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    counts = re.search(r"(\d+) passed", done.stdout)
    assert counts and int(counts.group(1)) >= 6, done.stdout[-2000:]
