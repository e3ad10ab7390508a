"""The first things a scikit-learn user writes, and errors that point at a fix that
works (issue 15, item 5).

* A search without query ids: the splitter's message names fixes that also reach
  the ranker and the scorers, and each of them is followed here to a working search;
  ``groups=qid`` alone leads to QueryRanker's message, which says why.
* ``sklearn-rank compare --baseline`` takes a run tag, a file name without extension,
  a file name or a path (the sample collection's files).
* ``sklearn-rank tune --data``: a problem in the query file names ``--query``; LightGBM's
  dense CSV / TSV files are read, to the same data as the LibSVM file.

(``cross_validate_ranker`` with a ``qid`` column: tests/test_frames.py.)
"""

import gzip
import os
import shutil

import numpy as np
import pandas as pd
import pytest
import sklearn
from lightgbm import LGBMRanker
from sklearn.model_selection import GridSearchCV

from sklearn_rank.cli._app import main
from sklearn_rank.datasets import load_sample_trec, load_svmlight_ranking, make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import make_ranking_scorer, ndcg_score
from sklearn_rank.model_selection import QueryKFold


def one_error_line(capsys, command):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith(f"sklearn-rank {command}: error: "), err
    return lines[0].removeprefix(f"sklearn-rank {command}: error: ")


# ------------------------------------------------------------- the search's first failure


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=30, random_state=0)


def search(qid_column=None):
    ranker = QueryRanker(LGBMRanker(n_estimators=5, n_jobs=1, verbose=-1),
                         qid_column=qid_column)
    return GridSearchCV(ranker, {"estimator__num_leaves": [3, 7]}, cv=QueryKFold(3),
                        scoring=make_ranking_scorer("ndcg@10"), error_score="raise")


def test_the_splitters_advice_leads_to_a_working_search(data):
    X, y, qid = data
    with pytest.raises(ValueError) as info:
        search().fit(X, y)
    message = str(info.value)
    assert message.startswith("QueryKFold.split needs the query id of each row. In a search "
                              "or cross-validation, give the ids where the ranker and the "
                              "scorers find them too: enable metadata routing")
    assert "pass qid=<one query id per row> to the search's fit" in message
    assert "give X a DataFrame column named 'qid'" in message
    assert "groups=qid alone is not enough" in message

    # fix 1: routing, qid= to the search's fit
    with sklearn.config_context(enable_metadata_routing=True):
        routed = search().fit(X, y, qid=qid)
    # fix 2: a DataFrame column named 'qid', nothing else
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(qid=qid)
    framed = search().fit(df, y)
    # fix 3 (the parenthesis): an array column named by qid_column, and groups=qid
    column = search(qid_column=0).fit(np.column_stack([qid, X]), y, groups=qid)
    for fitted in (framed, column):
        np.testing.assert_array_equal(fitted.cv_results_["split0_test_score"],
                                      routed.cv_results_["split0_test_score"])
    model = QueryRanker(LGBMRanker(n_estimators=5, n_jobs=1, verbose=-1)).set_params(
        **routed.best_params_).fit(X, y, qid=qid)
    assert ndcg_score(y, routed.predict(X), qid=qid, k=10) == pytest.approx(
        ndcg_score(y, model.predict(X), qid=qid, k=10), abs=1e-12)


def test_groups_alone_gets_the_rankers_message_saying_why(data):
    X, y, qid = data
    with pytest.raises(ValueError, match=r"QueryRanker\.fit needs the query id of each row of "
                                         r"X\. Either enable metadata routing.*groups=qid "
                                         r"does not reach it: without routing, a search's "
                                         r"fit\(X, y, groups=qid\) passes groups to the "
                                         r"splitter only, never to QueryRanker\.fit or the "
                                         r"scorers"):
        search().fit(X, y, groups=qid)


# ------------------------------------------------------------- compare --baseline


@pytest.fixture
def runs(tmp_path):
    """The sample runs under other file names: bm25's tag is "BM25-v1" in
    ``runs/bm25.run``, dense's tag the same in ``runs/dense.trec.gz`` (gzip), rm3
    as shipped."""
    sample = load_sample_trec()
    folder = tmp_path / "runs"
    folder.mkdir()
    bm25 = folder / "bm25.run"
    bm25.write_text(sample.runs["bm25"].read_text().replace(" bm25\n", " BM25-v1\n"))
    dense = folder / "dense.trec.gz"
    dense.write_bytes(gzip.compress(
        sample.runs["dense"].read_text().replace(" dense\n", " BM25-v1\n").encode()))
    rm3 = folder / "rm3.run"
    shutil.copy(sample.runs["rm3"], rm3)
    return sample, {"bm25": str(bm25), "dense": str(dense), "rm3": str(rm3)}


def baseline_row(capsys, argv):
    assert main(argv) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.rstrip().endswith("baseline")]
    assert len(rows) == 1
    return rows[0].split()[1:3] if "(" in rows[0] else rows[0].split()[1:2]


def test_readme_compare_command_with_the_sample_files(capsys):
    sample = load_sample_trec()
    argv = ["compare", str(sample.qrels), *(str(sample.runs[n]) for n in ("bm25", "rm3",
                                                                           "dense")),
            "-m", "ndcg_cut.10", "-m", "map", "--baseline", "bm25", "--resamples", "100"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.rstrip().endswith("baseline")]
    assert rows == [["ndcg_cut_10", "bm25", "0.4329", "baseline"],
                    ["map", "bm25", "0.2867", "baseline"]]  # trec_eval 10.0's numbers


@pytest.mark.parametrize("how", ["stem", "file name", "path", "other spelling of the path",
                                 "report name", "stem of a gzip file"])
def test_baseline_by_stem_file_name_or_path(runs, capsys, how, tmp_path):
    sample, paths = runs
    wanted = {"stem": "bm25", "file name": "bm25.run", "path": paths["bm25"],
              "other spelling of the path": os.path.join(tmp_path, "runs", "..", "runs",
                                                         "bm25.run"),
              "report name": "BM25-v1 (bm25.run)", "stem of a gzip file": "dense"}[how]
    argv = ["compare", str(sample.qrels), paths["rm3"], paths["bm25"], paths["dense"],
            "-m", "map", "--resamples", "50", "--baseline", wanted]
    expected = ["BM25-v1", "(dense.trec.gz)"] if how.endswith("gzip file") else [
        "BM25-v1", "(bm25.run)"]
    assert baseline_row(capsys, argv) == expected


def test_baseline_by_run_tag(runs, capsys):
    sample, paths = runs
    argv = ["compare", str(sample.qrels), paths["bm25"], paths["rm3"], "-m", "map",
            "--resamples", "50", "--baseline", "BM25-v1"]
    assert baseline_row(capsys, argv) == ["BM25-v1"]


def test_baseline_errors_say_how_to_name_a_run(runs, capsys):
    sample, paths = runs
    base = ["compare", str(sample.qrels), paths["bm25"], paths["dense"], paths["rm3"],
            "-m", "map", "--resamples", "50"]
    assert main([*base, "--baseline", "BM25-v1"]) == 2
    assert one_error_line(capsys, "compare") == (
        f"--baseline 'BM25-v1' is the run tag of 2 runs ({paths['bm25']}, {paths['dense']}); "
        "give the baseline's file path.")
    assert main([*base, "--baseline", "nope"]) == 2
    assert one_error_line(capsys, "compare") == (
        "--baseline 'nope' is none of the runs: BM25-v1 (bm25.run), BM25-v1 (dense.trec.gz), "
        "rm3 (rm3.run). Name one by its run tag, its file name without extension (bm25, "
        "dense, rm3), its file name or its path.")


# ------------------------------------------------------------- tune --data / --query


@pytest.fixture(scope="module")
def lightgbm_files(tmp_path_factory):
    """The same 40 queries as a LETOR file, a LibSVM file, a dense TSV and a dense CSV
    (labels first), with a query file of group sizes."""
    from sklearn.datasets import dump_svmlight_file

    folder = tmp_path_factory.mktemp("lightgbm")
    X, y, qid = make_ranking(n_queries=40, n_features=5, n_informative=3, random_state=3)
    X = np.round(X + 1.5, 6)  # no zeros, six decimals: the same numbers in every format
    paths = {name: str(folder / name) for name in
             ("train.letor", "train.svm", "train.tsv", "train.csv", "train.query")}
    dump_svmlight_file(X, y, paths["train.letor"], query_id=qid, zero_based=False)
    dump_svmlight_file(X, y, paths["train.svm"], zero_based=False)
    rows = np.column_stack([y, X])
    np.savetxt(paths["train.tsv"], rows, delimiter="\t", fmt="%.6f")
    np.savetxt(paths["train.csv"], rows, delimiter=",", fmt="%.6f")
    sizes = np.unique(qid, return_counts=True)[1]  # make_ranking's qids are 0..39, sorted
    with open(paths["train.query"], "w") as f:
        f.write("".join(f"{n}\n" for n in sizes))
    paths["folder"] = str(folder)
    return paths


def tune_output(argv, capsys):
    assert main(["tune", "--folds", "2", "--n-estimators", "3", *argv]) == 0
    out = capsys.readouterr().out
    return [line for line in out.splitlines() if not line.startswith(("data:", "done in"))]


def test_dense_lightgbm_files_are_read_like_the_libsvm_file(lightgbm_files, capsys):
    from sklearn_rank.cli._tune import _read_data

    p = lightgbm_files
    X_ref, y_ref, qid_ref = load_svmlight_ranking(p["train.svm"], p["train.query"])
    for name in ("train.tsv", "train.csv", "train.letor"):
        X, y, qid = _read_data(p[name], p["train.query"] if name != "train.letor" else None)
        np.testing.assert_array_equal(X.toarray() if hasattr(X, "toarray") else X,
                                      X_ref.toarray())
        np.testing.assert_array_equal(y, y_ref)
        assert np.array_equal(np.unique(qid, return_inverse=True)[1],
                              np.unique(qid_ref, return_inverse=True)[1])
    reference = tune_output(["--data", p["train.svm"], "--query", p["train.query"]], capsys)
    assert any("ndcg@10" in line for line in reference)
    for name in ("train.tsv", "train.csv"):
        assert tune_output(["--data", p[name], "--query", p["train.query"]],
                           capsys) == reference
    # gzip, and the query file found next to the data (LightGBM's convention)
    packed = os.path.join(p["folder"], "packed.tsv")
    with open(p["train.tsv"], "rb") as f:
        data = f.read()
    with gzip.open(packed, "wb") as g:
        g.write(data)
    shutil.copy(p["train.query"], packed + ".query")
    assert tune_output(["--data", packed], capsys) == reference


@pytest.fixture
def bad_files(tmp_path, lightgbm_files):
    def put(name, text):
        (tmp_path / name).write_text(text)
        return str(tmp_path / name)

    return {
        "letter.query": put("letter.query", "5\nabc\n"),
        "zero.query": put("zero.query", "0\n"),
        "short.query": put("short.query", "5\n3\n"),
        "header.csv": put("header.csv", "label,a,b\n1,2,3\n"),
        "gap.csv": put("gap.csv", "1,2,3\n1,,3\n"),
        "ragged.tsv": put("ragged.tsv", "1\t2\t3\n1\t2\n"),
        "inf.tsv": put("inf.tsv", "1\t2\t3\n# a comment\n\n2\tinf\t3\n"),
        "one.query": put("one.query", "2\n"),
        **lightgbm_files,
    }


TUNE_ERRORS = [
    (["--data", "{train_tsv}", "--query", "{letter_query}"],
     "--query: {letter_query}: line 2: group size 'abc' is not an integer"),
    (["--data", "{train_svm}", "--query", "{zero_query}"],
     "--query: {zero_query}: line 1: group size 0; sizes must be >= 1"),
    (["--data", "{train_tsv}", "--query", "{short_query}"],
     "--data, --query: The group sizes in {short_query} sum to 8 but {train_tsv} has "),
    (["--data", "{train_tsv}"],
     "--data: {train_tsv} has no query ids (a dense TSV file has none): pass --query FILE, "
     "LightGBM's query file of group sizes"),
    (["--data", "{train_svm}"],
     "--data: {train_svm} has no query ids (no qid: fields): pass --query FILE"),
    (["--data", "{header_csv}", "--query", "{one_query}"],
     "--data: {header_csv}: line 1: field 1 is 'label', not a number; a header line? "
     "LightGBM reads files without one: remove it"),
    (["--data", "{gap_csv}", "--query", "{one_query}"],
     "--data: {gap_csv}: line 2: field 2 is empty (write nan for a missing value)"),
    (["--data", "{ragged_tsv}", "--query", "{one_query}"],
     "--data: {ragged_tsv}: line 2 has 2 fields, the lines before it 3"),
    (["--data", "{inf_tsv}", "--query", "{one_query}"],
     "--data: {inf_tsv}: line 4: feature 1 is inf"),
]


@pytest.mark.parametrize("args, start", TUNE_ERRORS)
def test_tune_errors_name_the_option_of_the_file_at_fault(bad_files, capsys, args, start):
    files = {name.replace(".", "_"): path for name, path in bad_files.items()}
    args = [a.format_map(files) for a in args]
    assert main(["tune", "--n-estimators", "2", *args]) == 2
    line = one_error_line(capsys, "tune")
    assert line.startswith(start.format_map(files)), line


def test_tune_help_describes_the_formats_it_reads(capsys):
    assert main(["tune", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("an SVMlight/LETOR file with qid: fields, or a LightGBM text file (LibSVM, or "
            "dense CSV/TSV with the label first, no header) with its group sizes in --query"
            in out)
    assert "(default: FILE.query, when it exists)" in out
