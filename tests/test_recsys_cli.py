"""``sklearn-rank evaluate-recs``: the numbers of evaluate_recommendations from
CSV and Parquet files; bad input is one line naming the file and the fix."""

import json
import subprocess
import sys

import pandas as pd
import pytest
from test_recsys_evaluate import _data

from sklearn_rank.cli._app import main
from sklearn_rank.recsys import evaluate_recommendations


@pytest.fixture
def files(tmp_path):
    recs, test, train = _data(seed=2, string_ids=True)
    paths = {"recs": tmp_path / "recs.csv", "test": tmp_path / "test.csv.gz",
             "train": tmp_path / "train.parquet"}
    recs.to_csv(paths["recs"], index=False)
    test.to_csv(paths["test"], index=False)
    train.to_parquet(paths["train"])
    return {name: str(path) for name, path in paths.items()}, (recs, test, train)


def _json(capsys, *argv):
    assert main(["evaluate-recs", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_command_prints_the_evaluation_of_the_frames(files, capsys):
    paths, (recs, test, train) = files
    doc = _json(capsys, paths["recs"], paths["test"], "--train", paths["train"], "-k", "5",
                "-m", "ndcg", "-m", "recall@3", "-q")
    ev = evaluate_recommendations(recs, test, train=train, k=5, metrics=["ndcg", "recall@3"])
    assert doc["mean"] == pytest.approx(dict(ev.mean), rel=1e-12)
    assert doc["n_users_without_recs"] == ev.n_users_without_recs == 5
    assert doc["n_users_without_test"] == ev.n_users_without_test == 5
    assert list(doc["per_user"]["ndcg@5"]) == ev.qids.tolist()
    keep = _json(capsys, paths["recs"], paths["test"], "--train", paths["train"], "-k", "5",
                 "-m", "ndcg", "--keep-seen")
    assert keep["mean"]["ndcg@5"] == pytest.approx(
        evaluate_recommendations(recs, test, k=5, metrics=["ndcg"]).mean["ndcg@5"], rel=1e-12)


def test_table_and_csv_formats(files, capsys):
    paths, _ = files
    assert main(["evaluate-recs", paths["recs"], paths["test"], "-m", "p@5"]) == 0
    out = capsys.readouterr().out
    assert "p@5" in out and "users of TEST without recommendations (scored 0): 5" in out
    assert main(["evaluate-recs", paths["recs"], paths["test"], "-m", "p@5", "--format",
                 "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "metric,user,value,summary"


def test_csv_ids_are_text(tmp_path, capsys):
    # '007' and '7' are two users in a CSV file, as written
    pd.DataFrame({"user": ["007", "7"], "item": ["1", "1"], "score": [1.0, 1.0]}).to_csv(
        tmp_path / "r.csv", index=False)
    pd.DataFrame({"user": ["007"], "item": ["1"]}).to_csv(tmp_path / "t.csv", index=False)
    doc = _json(capsys, str(tmp_path / "r.csv"), str(tmp_path / "t.csv"), "-m", "p@1")
    assert doc["n_users"] == 1 and doc["mean"]["p@1"] == 1.0
    assert doc["n_users_without_test"] == 1


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r.drop(columns="score"),
     r"RECS file '.*recs.csv' has no column 'score' .* pass --score-col naming it"),
    (lambda r: pd.concat([r, r.iloc[:1]]),
     r"RECS file '.*recs.csv' lists user 'u5' and item '.*' twice \(rows 0 and \d+"),
])
def test_bad_files_give_one_line_naming_the_file(files, capsys, change, message):
    paths, (recs, _, _) = files
    change(recs).to_csv(paths["recs"], index=False)
    assert main(["evaluate-recs", paths["recs"], paths["test"]]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert err.startswith("sklearn-rank evaluate-recs: error: ")
    assert __import__("re").search(message, err), err


def test_bad_options_and_missing_files(files, capsys):
    paths, _ = files
    assert main(["evaluate-recs", paths["recs"], paths["test"], "-m", "ndcg@20"]) == 2
    assert "pass -k 20" in capsys.readouterr().err
    assert main(["evaluate-recs", paths["recs"] + ".missing", paths["test"]]) == 2
    err = capsys.readouterr().err
    assert "RECS" in err and "No such file" in err
    assert main(["evaluate-recs", paths["recs"], paths["test"], "--rating-col", "stars"]) == 2
    assert "TEST file" in capsys.readouterr().err


def test_no_traceback_through_python_m(files):
    paths, _ = files
    proc = subprocess.run([sys.executable, "-m", "sklearn_rank", "evaluate-recs",
                           paths["test"], paths["test"]], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
