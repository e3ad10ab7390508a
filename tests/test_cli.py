"""The sklearn-rank command line, run as a user would (subprocess)."""

import csv
import gc
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sklearn_rank
from sklearn_rank.cli import _tune
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


_KEPT = """
import sys
import numpy as np
from sklearn_rank.cli import _process

def rss():  # resident memory, kB
    return int(next(line for line in open("/proc/self/status")
                    if line.startswith("VmRSS")).split()[1])

if sys.argv[1] == "keep":
    _process.keep_freed_memory()
block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
held = rss()
del block
print(held - rss())
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_the_program_keeps_the_memory_it_frees():
    """``keep_freed_memory`` (part of the program's process, not of ``main``):
    on glibc a freed 64 MiB array stays with the process for the next arrays
    (no fresh pages to fault in); without it glibc gives it back at once."""
    def released(mode):
        proc = subprocess.run([sys.executable, "-c", _KEPT, mode], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return int(proc.stdout)

    assert released("default") > 48 * 1024  # kB: glibc unmapped it
    if "glibc" in " ".join(__import__("platform").libc_ver()):
        assert released("keep") < 8 * 1024


def test_the_console_script_and_python_m_enter_through_the_program():
    """The console script and ``python -m sklearn_rank`` both go through
    ``program`` (the process-level setting lives there, not in ``main``)."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="sklearn-rank")
    assert script.value == "sklearn_rank.cli._entry:program"
    pyproject = Path(__file__).parents[1] / "pyproject.toml"
    if pyproject.exists():  # a checkout: the script it installs
        assert 'sklearn-rank = "sklearn_rank.cli._entry:program"' in pyproject.read_text()
    main = (Path(sklearn_rank.__file__).parent / "__main__.py").read_text()
    assert "from .cli._entry import program" in main


def test_process_level_settings_live_in_one_module():
    """Switching the cycle collector and tuning the C allocator change the
    whole process: only ``cli/_process.py`` may do such a thing."""
    package = Path(sklearn_rank.__file__).parent
    pattern = re.compile(r"\bgc\.(disable|enable|freeze|set_threshold)\(|\bmallopt\b|"
                         r"\bimport ctypes\b")
    found = sorted(str(path.relative_to(package)) for path in package.rglob("*.py")
                   if pattern.search(path.read_text(encoding="utf-8")))
    assert found == [str(Path("cli") / "_process.py")]


def test_the_program_runs_without_the_cycle_collector():
    """``program`` (the console script's entry, not ``main``) turns Python's
    cycle collector off (imports and exit skip its walks over their objects)
    and freezes what is alive before the exit; ``tune`` turns it back on."""
    code = """
import gc
from sklearn_rank.cli import _app as _cli
from sklearn_rank.cli import _tune
from sklearn_rank.cli._entry import program

main, seen = _cli.main, []

def search(*args, **kwargs):  # what tune's fits run with
    seen.append(("fits", gc.isenabled()))
    raise ValueError("stop here")

def recorded():
    seen.append(("main", gc.isenabled()))
    return main(["tune", "--n-queries", "20", "--folds", "2"])

_tune.search, _cli.main = search, recorded
status = program()
print(seen, gc.get_freeze_count() > 0, status)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.split("\n")[-2] == "[('main', False), ('fits', True)] True 2", proc
    assert "stop here" in proc.stderr  # (the error line of the stopped search)
    assert gc.isenabled()  # main() from Python leaves it alone


def _means(text, name):
    """The held-out summary row of ``name``: mean, std, min, 25%, median, 75%, max."""
    row = re.search(rf"^  {re.escape(name)}\s+([-\d. ]+)$", text, re.M)
    return [float(v) for v in row.group(1).split()]


@pytest.fixture(scope="module")
def tune_run():
    """One small ``sklearn-rank tune`` run (TUNE), shared by the tests of its output."""
    return _run(*TUNE)


def _counted(n, noun, plural=None):
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def test_tune_prints_the_numbers_of_the_search(tune_run):
    out = tune_run.stdout
    flat = " ".join(out.split())  # the text, whatever lines it is wrapped into
    X, y, qid = make_ranking(n_queries=60, random_state=0)
    grid, ev, train, test, default = _tune.search(X, y, qid, k=5, folds=2, n_estimators=8)
    # the best parameters and the cross-validated table
    best = {k.removeprefix("estimator__"): v for k, v in grid.best_params_.items()}
    assert f"best parameters by ndcg@5: {best}" in flat
    i = int(np.argmin(grid.cv_results_["rank_test_ndcg@5"]))
    mean, std = grid.cv_results_["mean_test_ndcg@5"][i], grid.cv_results_["std_test_ndcg@5"][i]
    assert f"{mean:.4f}±{std:.4f}" in out
    # the ± is the spread of the fold scores, and the table says so
    folds = [grid.cv_results_[f"split{j}_test_ndcg@5"][i] for j in range(2)]
    assert (mean, std) == pytest.approx((np.mean(folds), np.std(folds)), abs=1e-15)
    assert ("mean±std of the 2 fold scores (the spread over folds, not a confidence "
            "interval" in flat)
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
    # the closing significance sentence: best vs LightGBM's defaults, per held-out query,
    # with wins / ties / losses (a tie: a difference within 1e-12)
    d = ev.per_query["ndcg@5"] - default.per_query["ndcg@5"]
    line = flat[flat.index("significance"):]
    p = float(re.search(r"p [=<] ([0-9.]+)", line).group(1))
    verb = ("beats" if d.mean() > 0 else "trails") if p < 0.05 else None
    claim = (f"the best candidate {verb} LightGBM's defaults on ndcg@5 by " if verb else
             "the best candidate does not differ significantly from LightGBM's defaults on "
             "ndcg@5: ")
    assert f"{claim}{d.mean():+.4f}" in line
    wins, losses = int((d > 1e-12).sum()), int((d < -1e-12).sum())
    assert (f"{_counted(wins, 'win')} / {_counted(d.size - wins - losses, 'tie')} / "
            f"{_counted(losses, 'loss', 'losses')}") in line
    # ... and it names the defaults: LightGBM's own, for the searched parameters
    import lightgbm

    defaults = lightgbm.LGBMRanker().get_params()
    named = line[line.index("(paired"):]
    assert named.startswith(f"(paired randomization test on {ev.n_queries} queries; "
                            "LightGBM's defaults: LGBMRanker(n_estimators=8, random_state=0) "
                            f"with LightGBM {lightgbm.__version__}'s default ")
    for name in ("num_leaves", "learning_rate", "min_child_samples"):
        assert f"{name}={defaults[name]!r}" in named
    assert (defaults["num_leaves"], defaults["learning_rate"],
            defaults["min_child_samples"]) == (31, 0.1, 20)  # LightGBM's documented defaults


def test_tune_output_fits_100_columns(tune_run, tmp_path):
    """Every line tune prints, on stdout and stderr, is at most 100 characters."""
    for stream in (tune_run.stdout, tune_run.stderr):
        assert max(map(len, stream.splitlines())) <= 100, stream
    # ... with a large k, every metric of the --metric choices, and a file of data
    from sklearn.datasets import dump_svmlight_file

    X, y, qid = make_ranking(n_queries=30, n_features=4, n_informative=2, random_state=1)
    letor = tmp_path / "train.txt"
    dump_svmlight_file(X, y, str(letor), query_id=qid, zero_based=False)
    out = _run("tune", "--data", str(letor), "--folds", "2", "--n-estimators", "3", "--k",
               "1000000", "--metric", "ndcg-classic").stdout
    assert max(map(len, out.splitlines())) <= 100, out


def test_tune_names_the_gain_and_discount_of_each_column(tune_run):
    """The table's short column names, spelled out below it: the metric spec and
    its gain and discount."""
    lines = tune_run.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("rank "))
    assert header.split()[-3:] == ["exponential", "linear", "classic"]
    legend = "\n".join(lines[lines.index("columns (l: a document's label, r: its rank, 1 at "
                                          "the top):") + 1:][:4])
    flat = " ".join(legend.split())
    assert ("exponential: ndcg@5 (gain 2^l-1 of label l, discount 1/log2(r+1) of rank r) "
            "linear: ndcg(gain='linear')@5 (gain l, discount 1/log2(r+1)) "
            "classic: ndcg(discount='classic')@5 (gain 2^l-1, classic discount "
            "1/max(1, log2 r): ranks 1-2 undiscounted)") in flat
    # the words are the metrics' own: gain and discount of a one-query example
    from sklearn_rank.metrics import ndcg_score

    labels, score = np.array([[0, 3, 1, 2]]), np.array([[4.0, 3.0, 2.0, 1.0]])
    ranks = np.arange(1, 5)

    def ndcg(gain, discount):
        dcg = lambda g: (g * discount).sum()  # noqa: E731
        return dcg(gain(labels[0])) / dcg(np.sort(gain(labels[0]))[::-1])

    log2 = 1 / np.log2(ranks + 1)
    classic = 1 / np.maximum(1, np.log2(ranks))
    assert ndcg_score(labels, score) == pytest.approx(ndcg(lambda g: 2.0**g - 1, log2),
                                                      rel=1e-12)
    assert ndcg_score(labels, score, gain="linear") == pytest.approx(
        ndcg(lambda g: g.astype(float), log2), rel=1e-12)
    assert ndcg_score(labels, score, discount="classic") == pytest.approx(
        ndcg(lambda g: 2.0**g - 1, classic), rel=1e-12)


def test_tune_prints_lightgbm_own_ndcg_beside_ours(tune_run):
    """LightGBM's ndcg@k of the best model, computed by LightGBM, equals this
    package's ndcg(convention='lightgbm')@k (both float64: rel=1e-12); its
    ndcg@k (empty queries 0, ties averaged) is printed beside them."""
    from sklearn_rank.cli._tune_report import lightgbm_ndcg

    out = tune_run.stdout
    X, y, qid = make_ranking(n_queries=60, random_state=0)
    grid, ev, _, test, _ = _tune.search(X, y, qid, k=5, folds=2, n_estimators=8)
    pred = grid.predict(X[test])
    theirs = lightgbm_ndcg(y[test], pred, qid[test], 5)
    same = evaluate(y[test], pred, qid=qid[test],
                    metrics=["ndcg(convention='lightgbm')@5"]).mean[
                        "ndcg(convention='lightgbm')@5"]
    assert theirs == pytest.approx(same, rel=1e-12)
    printed = dict(re.findall(r"^  (LightGBM's own ndcg@5|ndcg\(convention='lightgbm'\)@5|"
                              r"ndcg@5) \(.*\)\s+([0-9.]+)$", out, re.M))
    assert printed.keys() == {"LightGBM's own ndcg@5", "ndcg(convention='lightgbm')@5",
                              "ndcg@5"}
    assert float(printed["LightGBM's own ndcg@5"]) == pytest.approx(theirs, abs=5e-5)
    assert float(printed["ndcg(convention='lightgbm')@5"]) == pytest.approx(same, abs=5e-5)
    assert float(printed["ndcg@5"]) == pytest.approx(ev.mean["ndcg@5"], abs=5e-5)
    assert ev.n_empty["ndcg@5"] > 0 and theirs > ev.mean["ndcg@5"]  # the reason shows here
    flat = " ".join(out.split())
    assert (f"LightGBM scores a query without relevant documents 1 ({ev.n_empty['ndcg@5']} "
            "here; this package scores it 0) and breaks score ties by the rows' order (this "
            "package averages over the orders of tied documents).") in flat


def test_lightgbm_ndcg_is_lightgbms_validation_metric():
    """``lightgbm_ndcg`` gives what LightGBM reports for a validation set during
    training (``evals_result_``), and ndcg(convention='lightgbm') its number on
    scores with ties and queries without relevant documents, rows in any order
    (LightGBM and this package compute in float64: rel=1e-12)."""
    import lightgbm

    from sklearn_rank.cli._tune_report import lightgbm_ndcg

    X, y, qid = make_ranking(n_queries=50, random_state=2)
    train, valid = qid < 35, qid >= 35
    sizes = lambda q: np.unique(q, return_counts=True)[1]  # noqa: E731 (sorted ids)
    data = lightgbm.Dataset(X[train], y[train], group=sizes(qid[train]))
    held = lightgbm.Dataset(X[valid], y[valid], group=sizes(qid[valid]), reference=data)
    result = {}
    booster = lightgbm.train(
        {"objective": "lambdarank", "metric": "ndcg", "eval_at": [3], "verbose": -1,
         "num_threads": 1}, data, num_boost_round=6, valid_sets=[held], valid_names=["held"],
        callbacks=[lightgbm.record_evaluation(result)])
    reported = result["held"]["ndcg@3"][-1]
    assert lightgbm_ndcg(y[valid], booster.predict(X[valid]), qid[valid], 3) == pytest.approx(
        reported, rel=1e-12)
    # ties (scores rounded) and empty queries (labels zeroed), rows of queries interleaved
    rng = np.random.default_rng(0)
    score = np.round(rng.normal(size=y.size), 1)
    labels = np.where(qid % 4 == 0, 0, y)
    rows = np.argsort(rng.permutation(y.size) % 7, kind="stable")  # each query's order kept
    for k in (1, 5, 10**6):
        theirs = lightgbm_ndcg(labels[rows], score[rows], qid[rows], k)
        ours = evaluate(labels[rows], score[rows], qid=qid[rows],
                        metrics=[f"ndcg(convention='lightgbm')@{k}", f"ndcg@{k}"]).mean
        assert theirs == pytest.approx(ours[f"ndcg(convention='lightgbm')@{k}"], rel=1e-12)
        assert abs(theirs - ours[f"ndcg@{k}"]) > 1e-3


def test_docs_show_tune_output_as_printed():
    """The tuning guide's sample of ``sklearn-rank tune`` (a code block indented
    by three spaces): lines of at most 100 characters, with the column legend
    tune prints (for k = 10)."""
    from sklearn_rank.cli._tune_report import _legend

    page = Path(__file__).parents[1] / "docs" / "user_guide" / "tuning.rst"
    lines = page.read_text(encoding="utf-8").split("\n")
    start = lines.index("   $ sklearn-rank tune")
    block = itertools.takewhile(lambda line: not line or line.startswith("   "), lines[start:])
    sample = "\n".join(line[3:] for line in block)
    assert max(map(len, sample.splitlines())) <= 100
    assert _legend(_tune._metric_names(10, "ndcg")[0]) in sample
    assert "rank  learning_rate  min_child_samples  num_leaves    exponential" in sample
    assert re.search(r"\d+ wins? / \d+ ties? / \d+ loss(es)?", sample)
    assert "LightGBM's own ndcg@10 (its metric, computed by LightGBM)" in sample


def test_tune_shows_progress_on_stderr(tune_run):
    err = tune_run.stderr
    assert "cross-validating: 16/16 fits" in err


def test_tune_fits_at_once_give_the_serial_results():
    """Fits on two threads at once: cv_results_, the best model and the held-out
    evaluations of one fit at a time, bit for bit."""
    X, y, qid = make_ranking(n_queries=60, random_state=0)
    runs = {n_jobs: _tune.search(X, y, qid, k=5, folds=3, n_estimators=8, n_jobs=n_jobs)
            for n_jobs in (1, 2)}
    (one, ev_one, _, _, default_one), (two, ev_two, _, _, default_two) = runs[1], runs[2]
    assert (one.n_jobs, two.n_jobs) == (1, 2)
    assert two.estimator.estimator.n_jobs == 1  # one LightGBM thread per fit
    keys = [k for k in one.cv_results_ if k.startswith(("split", "mean_test", "std_test",
                                                        "rank_test"))]
    assert len(keys) == 3 * (3 + 3)  # three metrics: 3 folds, mean, std, rank
    for key in keys:
        np.testing.assert_array_equal(two.cv_results_[key], one.cv_results_[key],
                                      err_msg=key)
    assert two.best_params_ == one.best_params_
    np.testing.assert_array_equal(two.predict(X), one.predict(X))
    assert ev_two == ev_one and default_two == default_one


def test_tune_uses_the_usable_cores_by_default():
    import joblib

    from sklearn_rank.cli._app import build_parser

    assert build_parser().parse_args(["tune"]).n_jobs is None
    cores = joblib.cpu_count()  # affinity and cgroup quotas counted
    assert _tune.usable_cores() == cores
    assert [_tune._threads(n) for n in (1, 3, -1, -2, -10**6)] == [1, 3, cores,
                                                                  max(cores - 1, 1), 1]
    X, y, qid = make_ranking(n_queries=30, random_state=0)
    assert _tune.search(X, y, qid, folds=2, n_estimators=2)[0].n_jobs == cores
    out = _run("tune", "--n-queries", "30", "--folds", "2", "--n-estimators", "2").stdout
    assert f"(QueryKFold), {cores} fit{'s' if cores > 1 else ''} at a time, refit" in out


# The command run as main(), then what is left of it in its process: threads and
# child processes (from /proc).
LEFTOVERS = """
import os, sys, threading
from sklearn_rank.cli._app import main
status = main(sys.argv[1:])
children = []
for entry in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{entry}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if int(fields[1]) == os.getpid():
        children.append(entry)
print(status, [t.name for t in threading.enumerate()], children)
"""


def _session_members(session: int) -> list[int]:
    """Processes still in the session the command was started in."""
    members = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:
            members.append(int(entry))
    return members


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("n_jobs", [[], ["--n-jobs", "2"], ["--n-jobs", "-1"]])
def test_tune_leaves_no_thread_or_process(n_jobs):
    """DESIGN §8: when the command returns, its threads (the fits, the model beside the
    search) are gone and it started no process; after it exits, nothing of it is left."""
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", LEFTOVERS, "tune", "--n-queries", "30", "--folds", "3",
             "--n-estimators", "3", *n_jobs],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.splitlines()[-1] == "0 ['MainThread'] []"
        assert _session_members(proc.pid) == []


def test_tune_on_a_file(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y, qid = make_ranking(n_queries=40, n_features=6, n_informative=3, random_state=3)
    letor = tmp_path / "train.txt"
    dump_svmlight_file(X, y, str(letor), query_id=qid, zero_based=False)
    out = _run("tune", "--data", str(letor), "--folds", "2", "--n-estimators", "5").stdout
    assert f"{letor}: {X.shape[0]} rows, 40 queries, 6 features" in " ".join(out.split())
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


# ---------------------------------------------------------------- evaluate

QRELS = """\
q1 0 d1 2
q1 0 d2 0
q1 0 d3 1
q2 0 d1 1
q2 0 d5 -1
q3 0 d9 1
"""
RUN_A = """\
q1 Q0 d1 1 0.9 bm25
q1 Q0 d2 2 0.8 bm25
q1 Q0 d4 3 0.7 bm25
q2 Q0 d2 1 0.5 bm25
q2 Q0 d1 2 0.5 bm25
q4 Q0 d1 1 0.5 bm25
"""
RUN_B = RUN_A.replace("bm25", "dense").replace("0.9", "0.1")


def _trec_files(tmp_path):
    paths = []
    for name, text in (("qrels.txt", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    return paths


def test_evaluate_trec_format_equals_evaluate_run(tmp_path):
    from sklearn_rank.trec import evaluate_run

    qrels, run_a, _ = _trec_files(tmp_path)
    # q3 is judged but not in the run: trec_eval 10 stops without -c
    proc = _run("evaluate", qrels, run_a, "-m", "map", "-q", "--format", "trec", check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "'q3'" in proc.stderr and "-c" in proc.stderr
    out = _run("evaluate", qrels, run_a, "-m", "map", "-m", "P.1,2", "-m", "ndcg_cut.3",
               "-q", "-c", "--format", "trec").stdout
    ev = evaluate_run(qrels, run_a, ["map", "P.1,2", "ndcg_cut.3"], complete=True,
                      convention="trec_eval")  # --format trec: trec_eval's meaning
    printed = {(m, q): float(v) for m, q, v in (line.split("\t") for line in out.splitlines())}
    assert {m.strip() for m, _ in printed} == {"map", "P_1", "P_2", "ndcg_cut_3"}
    for key, name in (("map", "map"), ("P.2", "P_2"), ("ndcg_cut.3", "ndcg_cut_3")):
        for qid, value in zip(ev.qids, ev.per_query[key], strict=True):
            assert printed[(f"{name:<22}", qid)] == pytest.approx(value, abs=5e-5)
        assert printed[(f"{name:<22}", "all")] == pytest.approx(ev.mean[key], abs=5e-5)
    # q2's tie (d2, d1 at 0.5) is broken by decreasing docno: d2 first, so P@1 = 0
    assert printed[(f"{'P_1':<22}", "q2")] == 0.0
    assert ("map                   ", "q4") not in printed  # not judged: skipped


def test_evaluate_imports_neither_sklearn_nor_pandas(tmp_path):
    """A one-off evaluation of TREC files stays light: scikit-learn's validation
    machinery and pandas (pulled in by pyarrow's to_numpy) cost about 1.3 s
    to import, more than evaluating a million-line run."""
    qrels, run_a, run_b = _trec_files(tmp_path)
    code = (
        "import sys\n"
        "from sklearn_rank.cli._app import main\n"
        f"status = main(['evaluate', {qrels!r}, {run_a!r}, {run_b!r}, '-m', 'map', '-m', "
        "'ndcg_cut.3', '-l', '2', '-c', '--format', 'json'])\n"
        "heavy = sorted({'sklearn', 'pandas'} & set(sys.modules))\n"
        "print('IMPORTED', heavy, status)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "IMPORTED [] 0"


def test_evaluate_json_csv_table_and_flags(tmp_path):
    qrels, run_a, run_b = _trec_files(tmp_path)
    doc = json.loads(_run("evaluate", qrels, run_a, run_b, "-m", "recip_rank", "-c", "-q",
                          "--format", "json").stdout)
    assert set(doc["runs"]) == {"bm25", "dense"}
    bm25 = doc["runs"]["bm25"]
    assert bm25["n_queries"] == 3  # -c: q3 is judged but not retrieved
    assert bm25["per_query"]["recip_rank"] == {"q1": 1.0, "q2": 0.5, "q3": 0.0}
    assert bm25["mean"]["recip_rank"] == pytest.approx(0.5)
    csv_text = _run("evaluate", qrels, run_a, "-m", "P.1", "-l", "2", "--format", "csv").stdout
    rows = list(csv.reader(io.StringIO(csv_text)))
    assert rows[0] == ["run", "measure", "qid", "value", "summary"]
    assert rows[1] == ["bm25", "P_1", "all", "0.5", "1"]  # -l 2: only q1's d1 is relevant
    table = _run("evaluate", qrels, run_a, run_b, "-m", "map").stdout
    header, rule, row = table.splitlines()[:3]
    assert header.split() == ["measure", "bm25", "dense"]
    assert row.split()[0] == "map" and len(row.split()) == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (["evaluate", "QRELS", "missing.run"], "No such file or directory"),
        (["evaluate", "QRELS", "BAD"], "line 2: expected 6 fields"),
        (["evaluate", "QRELS", "RUN", "-m", "ndgc@10"], "Did you mean 'ndcg'"),
        (["evaluate", "QRELS"], "the following arguments are required"),
    ],
)
def test_evaluate_bad_input_exits_2_with_one_line(tmp_path, args, message):
    qrels, run_a, _ = _trec_files(tmp_path)
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2\n")
    args = [{"QRELS": qrels, "RUN": run_a, "BAD": str(bad)}.get(a, a) for a in args]
    proc = _run(*args, check=False)
    assert proc.returncode == 2
    assert message in proc.stderr
    if args[-1] != qrels:  # our own errors are one line
        assert len(proc.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- compare and plots


def _more_queries(tmp_path, n_queries=30, seed=0):
    """A qrels file and two runs over n_queries queries (the second clearly better)."""
    rng = np.random.default_rng(seed)
    qrels, good, bad = [], [], []
    for q in range(n_queries):
        labels = rng.integers(0, 3, 15)
        for d, rel in enumerate(labels):
            qrels.append(f"q{q} 0 d{d} {rel}")
        for run, noise, tag in ((good, 0.5, "good"), (bad, 3.0, "bad")):
            scores = labels + rng.normal(0, noise, 15)
            for d in np.argsort(-scores):
                run.append(f"q{q} Q0 d{d} 0 {scores[d]:.4f} {tag}")
    paths = []
    for name, lines in (("qrels.txt", qrels), ("bad.run", bad), ("good.run", good)):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        paths.append(str(tmp_path / name))
    return paths


def test_compare_prints_the_report(tmp_path):
    from sklearn_rank.stats import compare
    from sklearn_rank.trec import evaluate_run

    qrels, bad, good = _more_queries(tmp_path)
    out = _run("compare", qrels, bad, good, "-m", "ndcg_cut.5", "-m", "map",
               "--resamples", "2000").stdout
    evs = {"bad": evaluate_run(qrels, bad, ["ndcg_cut.5", "map"]),
           "good": evaluate_run(qrels, good, ["ndcg_cut.5", "map"])}
    report = compare(evs, n_resamples=2000, random_state=0, missing="zero")
    c = report.comparisons[0]
    assert f"good beats bad on ndcg_cut_5 by {c.difference:+.4f}" in out
    assert f"{c.wins} wins / {c.losses} losses" in out
    assert "ndcg_cut_5" in out.splitlines()[2] and " *" in out  # clearly significant
    md = _run("compare", qrels, bad, good, "-m", "map", "--format", "markdown",
              "--baseline", "good", "--resamples", "500").stdout
    assert md.startswith("| metric | system | mean | Δ vs good |")
    latex = _run("compare", qrels, bad, good, "-m", "P.5", "--format", "latex",
                 "--test", "ttest", "--correction", "none").stdout
    assert r"\begin{tabular}" in latex and "P\\_5" in latex


def test_compare_corrections_and_seed(tmp_path):
    """--correction fdr_bh is compare(correction="fdr_bh"); the default --seed 0 is
    compare's default seed, so the report repeats."""
    from sklearn_rank._utils.text import p_text
    from sklearn_rank.stats import compare
    from sklearn_rank.trec import evaluate_run

    qrels, bad, good = _more_queries(tmp_path, n_queries=12)
    args = ["compare", qrels, bad, good, "-m", "ndcg_cut.5", "-m", "map", "-m", "P.5",
            "--resamples", "500"]
    out = _run(*args, "--correction", "fdr_bh").stdout
    evs = {name: evaluate_run(qrels, path, ["ndcg_cut.5", "map", "P.5"])
           for name, path in (("bad", bad), ("good", good))}
    report = compare(evs, correction="fdr_bh", n_resamples=500, missing="zero")
    assert "p (BH)" in out and "Benjamini-Hochberg" in out
    for c in report.comparisons:
        assert f"{p_text(c.pvalue_corrected, True)} (BH)" in out
    assert _run(*args, "--correction", "fdr_bh").stdout == out  # seeded by default
    assert _run(*args, "--correction", "fdr_bh", "--seed", "0").stdout == out
    proc = _run(*args, "--correction", "bh", check=False)
    assert proc.returncode == 2 and "invalid choice: 'bh'" in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--baseline", "nope"], "--baseline 'nope' is none of the runs: bad, good"),
    (["-m", "zz"], "Unknown metric 'zz'"),
])
def test_compare_bad_input_exits_2(tmp_path, args, message):
    qrels, bad, good = _more_queries(tmp_path, n_queries=5)
    proc = _run("compare", qrels, bad, good, *args, check=False)
    assert proc.returncode == 2 and message in proc.stderr
    one = _run("compare", qrels, bad, check=False)
    assert one.returncode == 2 and "at least two runs" in one.stderr


def _png_size(path):
    from PIL import Image

    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        return image.format, image.size


def test_plots_are_written(tmp_path):
    qrels, bad, good = _more_queries(tmp_path, n_queries=10)
    evaluate_png, compare_png = tmp_path / "evaluate.png", tmp_path / "compare.png"
    _run("evaluate", qrels, bad, good, "-m", "ndcg_cut.10", "-m", "P.5", "--plot",
         str(evaluate_png))
    proc = _run("compare", qrels, bad, good, "-m", "ndcg_cut.10", "--plot", str(compare_png),
                "--resamples", "200")
    assert f"plot written to {compare_png}" in proc.stderr
    fmt, (width, height) = _png_size(evaluate_png)
    assert fmt == "PNG" and evaluate_png.stat().st_size > 0
    assert (width, height) == (1000, 380)  # two metric@k panels side by side
    fmt, (width, height) = _png_size(compare_png)
    assert fmt == "PNG" and (width, height) == (500, 760)  # curves over differences


def test_plot_without_matplotlib_is_a_clear_error(tmp_path, monkeypatch, capsys):
    import sys

    from sklearn_rank.cli._app import main

    qrels, bad, _ = _more_queries(tmp_path, n_queries=3)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    code = main(["evaluate", qrels, bad, "-m", "P.5", "--plot", str(tmp_path / "x.png")])
    assert code == 2
    assert '--plot needs matplotlib: pip install "sklearn-rank[plot]"' in capsys.readouterr().err
