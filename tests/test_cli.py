"""The sklearn-rank command line, run as a user would (subprocess)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sklearn_rank
from sklearn_rank import _tune
from sklearn_rank.datasets import make_ranking
from sklearn_rank.metrics import evaluate

TUNE = ["tune", "--n-queries", "60", "--folds", "2", "--n-estimators", "8", "--k", "5"]


def _run(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "sklearn_rank", *args], capture_output=True,
                          text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_version_both_ways():
    assert _run("--version").stdout.strip() == f"sklearn-rank {sklearn_rank.__version__}"
    # the console script installed beside this interpreter
    script = shutil.which("sklearn-rank", path=str(Path(sys.executable).parent))
    assert script is not None
    script = subprocess.run([script, "--version"], capture_output=True, text=True)
    assert script.stdout.strip() == f"sklearn-rank {sklearn_rank.__version__}"


def _means(text, name):
    """The held-out summary row of ``name``: mean, std, min, 25%, median, 75%, max."""
    row = re.search(rf"^  {re.escape(name)}\s+([-\d. ]+)$", text, re.M)
    return [float(v) for v in row.group(1).split()]


def test_tune_prints_the_numbers_of_the_search():
    out = _run(*TUNE).stdout
    X, y, qid = make_ranking(n_queries=60, random_state=0)
    grid, ev, train, test = _tune.search(X, y, qid, k=5, folds=2, n_estimators=8)
    # the best parameters and the cross-validated table
    best = {k.removeprefix("estimator__"): v for k, v in grid.best_params_.items()}
    assert f"best parameters by ndcg@5: {best}" in out
    i = int(np.argmin(grid.cv_results_["rank_test_ndcg@5"]))
    mean, std = grid.cv_results_["mean_test_ndcg@5"][i], grid.cv_results_["std_test_ndcg@5"][i]
    assert f"{mean:.4f} ± {std:.4f}" in out
    # the held-out per-query summary equals the metric recomputed from scratch
    pred = grid.best_estimator_.predict(X[test])
    for name in ("ndcg@5", "ndcg(gain='linear')@5", "ndcg(discount='classic')@5"):
        per_query = evaluate(y[test], pred, qid=qid[test], metrics=[name]).per_query[name]
        printed = _means(out, name)
        assert printed[0] == pytest.approx(per_query.mean(), abs=5e-5)
        assert printed[2:] == pytest.approx(np.percentile(per_query, [0, 25, 50, 75, 100]),
                                            abs=5e-5)
        assert ev.per_query[name] == pytest.approx(per_query, abs=1e-12)
    # no held-out query was seen in tuning
    assert not set(qid[train]) & set(qid[test])


def test_tune_shows_progress_on_stderr():
    err = _run(*TUNE).stderr
    assert "cross-validating: 16/16 fits" in err


def test_tune_on_a_file(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y, qid = make_ranking(n_queries=40, n_features=6, n_informative=3, random_state=3)
    letor = tmp_path / "train.txt"
    dump_svmlight_file(X, y, str(letor), query_id=qid, zero_based=False)
    out = _run("tune", "--data", str(letor), "--folds", "2", "--n-estimators", "5").stdout
    assert f"{letor}: {X.shape[0]} rows, 40 queries, 6 features" in out
    # LightGBM's text format: no qid, a .query file of group sizes
    lgb = tmp_path / "train.lgb"
    dump_svmlight_file(X, y, str(lgb), zero_based=False)
    sizes = tmp_path / "sizes.query"
    sizes.write_text("\n".join(str(c) for c in np.bincount(qid)) + "\n")
    out = _run("tune", "--data", str(lgb), "--query", str(sizes), "--folds", "2",
               "--n-estimators", "5").stdout
    assert "40 queries" in out


@pytest.mark.parametrize("args", [["tune", "--k", "0"], ["tune", "--folds", "1"],
                                  ["tune", "--metric", "map"], ["nonsense"]])
def test_bad_arguments_exit_2(args):
    proc = _run(*args, check=False)
    assert proc.returncode == 2
    assert "error" in proc.stderr
