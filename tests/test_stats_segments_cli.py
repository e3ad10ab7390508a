"""``sklearn-rank compare --segments FILE --worst K`` (issue 28 item 6): the
command prints compare_segments' report of the evaluated runs, and refuses a bad
segments file naming its line."""

import subprocess
import sys

import numpy as np
import pytest

from sklearn_rank._utils.text import p_text
from sklearn_rank.stats import compare_segments, worst_queries
from sklearn_rank.trec import evaluate_run


def _run(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "sklearn_rank", *args], capture_output=True,
                          text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def _files(tmp_path, n_queries=24, seed=0):
    """A qrels file, two runs (the second better) and a segments file."""
    rng = np.random.default_rng(seed)
    qrels, good, bad = [], [], []
    for q in range(n_queries):
        labels = rng.integers(0, 3, 12)
        qrels += [f"q{q} 0 d{d} {rel}" for d, rel in enumerate(labels)]
        for run, noise, tag in ((good, 1.0, "good"), (bad, 3.0, "bad")):
            scores = labels + rng.normal(0, noise, 12)
            run += [f"q{q} Q0 d{d} 0 {scores[d]:.4f} {tag}" for d in np.argsort(-scores)]
    segments = ["# query segment", *(f"q{q}\t{'short' if q % 3 else 'long tail'}"
                                     for q in range(n_queries))]
    paths = []
    for name, lines in (("qrels.txt", qrels), ("bad.run", bad), ("good.run", good),
                        ("segments.txt", segments)):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        paths.append(str(tmp_path / name))
    return paths


def test_compare_segments_and_worst_from_the_command_line(tmp_path):
    qrels, bad, good, segments = _files(tmp_path)
    out = _run("compare", qrels, bad, good, "-m", "map", "-m", "P.5", "--segments", segments,
               "--worst", "3", "--resamples", "500").stdout
    evs = {name: evaluate_run(qrels, path, ["map", "P.5"])
           for name, path in (("bad", bad), ("good", good))}
    mapping = {f"q{q}": "short" if q % 3 else "long tail" for q in range(24)}
    report = compare_segments(evs, mapping, n_resamples=500, missing="zero", worst=3)
    assert "Per segment (2 segments): p corrected by Holm across the 4" in out
    for segment in ("long tail", "short"):
        for c in report.reports[segment].comparisons:
            row = next(line for line in out.splitlines()
                       if line.startswith(segment) and f" {c.metric} " in line)
            assert f"{c.difference:+.4f}" in row and p_text(c.pvalue_corrected) in row
            assert f"{c.wins}/{c.ties}/{c.losses}" in row
    for metric in ("map", "P_5"):
        w = worst_queries(evs["good"], evs["bad"], metric=metric, k=3, missing="zero")
        if w.n_losses:
            assert f"where good loses most to bad (of {w.n_losses} lost, 24 paired)" in out
            for q, d in zip(w.qids.tolist(), w.differences, strict=True):
                assert any(line.startswith(q) and f"{d:+.4f}" in line
                           for line in out.splitlines())
        else:
            assert "good loses to bad on no query (of 24 paired)" in out
    md = _run("compare", qrels, bad, good, "-m", "map", "--segments", segments,
              "--resamples", "200", "--format", "markdown").stdout
    assert "| segment | queries | metric |" in md
    only_worst = _run("compare", qrels, bad, good, "-m", "map", "--worst", "2",
                      "--resamples", "200").stdout
    assert "Per segment" not in only_worst and "map: " in only_worst.split("\n\n")[-1]


@pytest.mark.parametrize("content, message", [
    ("q1 a\nq2\n", "segments.txt:2: 'q2' has no segment; each line is 'QUERY SEGMENT'"),
    ("q1 a\n\nq1 b\n", "segments.txt:3: query 'q1' is in segment 'b' here and in 'a' on "
                       "line 1"),
    ("# nothing\n", "holds no 'QUERY SEGMENT' line"),
    ("q1 a\n", "query 'q0' (str) of evaluations['bad'] has no segment"),
])
def test_a_bad_segments_file_exits_2_naming_the_line(tmp_path, content, message):
    qrels, bad, good, segments = _files(tmp_path, n_queries=6)
    (tmp_path / "segments.txt").write_text(content)
    proc = _run("compare", qrels, bad, good, "-m", "map", "--segments", segments,
                "--resamples", "100", check=False)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr
    missing = _run("compare", qrels, bad, good, "--segments", str(tmp_path / "nope.txt"),
                   check=False)
    assert missing.returncode == 2 and "No such file" in missing.stderr
