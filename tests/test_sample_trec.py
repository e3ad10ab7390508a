"""The sample TREC collection: what the generator writes, readable, and as described."""

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import pytrec_eval

from sklearn_rank.datasets import load_sample_trec
from sklearn_rank.stats import compare
from sklearn_rank.trec import evaluate_run, read_qrels, read_run

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "maint_tools" / "make_sample_trec.py"
FILES = ["qrels.txt", "bm25.run", "rm3.run", "dense.run"]


def _lines(path):
    return [line.split() for line in path.read_text(encoding="ascii").splitlines()]


def _pytrec(path, column, cast):
    table = {}
    for fields in _lines(path):
        table.setdefault(fields[0], {})[fields[2]] = cast(fields[column])
    return table


def test_shipped_files_are_what_the_script_writes(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    sample = load_sample_trec()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (sample.folder / name).read_bytes(), name


def test_load_sample_trec_gives_the_paths():
    sample = load_sample_trec()
    assert set(sample) == {"qrels", "runs", "folder", "DESCR"}
    assert sample.qrels == sample.folder / "qrels.txt" and sample.qrels.is_file()
    assert list(sample.runs) == ["bm25", "rm3", "dense"]
    for name, path in sample.runs.items():
        assert path == sample.folder / f"{name}.run" and path.is_file()
        assert {fields[5] for fields in _lines(path)} == {name}  # the run tag is the name
    assert sorted(p.name for p in sample.folder.iterdir()) == sorted(FILES)
    # a new Bunch every call: changing one does not change the next
    sample.runs.clear()
    assert list(load_sample_trec().runs) == ["bm25", "rm3", "dense"]


def test_description_matches_the_files():
    sample = load_sample_trec()
    qrels = _lines(sample.qrels)
    levels = Counter(int(fields[3]) for fields in qrels)
    relevant = Counter(fields[0] for fields in qrels if int(fields[3]) > 0)
    topics = sorted({fields[0] for fields in qrels})
    assert topics == [str(t) for t in range(401, 426)]
    assert f"{len(qrels)} judgments" in sample.DESCR
    assert (f"levels 0\n  (non-relevant, {levels[0]}), 1 (relevant, {levels[1]}) and 2 "
            f"(highly relevant, {levels[2]})") in sample.DESCR
    assert f"{min(relevant.values())} to {max(relevant.values())} relevant" in sample.DESCR
    for path in sample.runs.values():
        run = _lines(path)
        assert len(run) == 500 and Counter(fields[0] for fields in run) == dict.fromkeys(
            topics, 20)
        assert [int(fields[3]) for fields in run[:20]] == list(range(1, 21))
    # the means quoted, recomputed by pytrec_eval (trec_eval 9.0.8's code)
    evaluator = pytrec_eval.RelevanceEvaluator(_pytrec(sample.qrels, 3, int),
                                               {"map", "ndcg_cut.10"})
    quoted = re.search(r"map ([\d.]+),\n?\s*([\d.]+) and ([\d.]+), ndcg_cut_10 ([\d.]+), "
                       r"([\d.]+) and ([\d.]+)", sample.DESCR.replace("\n", " "))
    expected = [float(v) for v in quoted.groups()]
    per_run = [evaluator.evaluate(_pytrec(path, 4, float)) for path in sample.runs.values()]
    for i, measure in enumerate(["map", "ndcg_cut_10"]):
        for j, values in enumerate(per_run):
            mean = sum(q[measure] for q in values.values()) / len(values)
            assert mean == pytest.approx(expected[3 * i + j], abs=5e-5)


def test_sample_evaluates_as_pytrec_eval():
    sample = load_sample_trec()
    qrels = read_qrels(sample.qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(_pytrec(sample.qrels, 3, int),
                                               {"map", "ndcg_cut.10", "P.10", "bpref"})
    for path in sample.runs.values():
        ours = evaluate_run(qrels, read_run(path), ["map", "ndcg_cut.10", "P.10", "bpref"])
        theirs = evaluator.evaluate(_pytrec(path, 4, float))
        assert [str(q) for q in ours.qids] == sorted(theirs)
        for spec, name in [("map", "map"), ("ndcg_cut.10", "ndcg_cut_10"), ("P.10", "P_10"),
                           ("bpref", "bpref")]:
            assert ours.per_query[spec] == pytest.approx(
                [theirs[q][name] for q in sorted(theirs)], abs=1e-6)


def test_dense_beats_bm25_and_rm3_does_not():
    # What the docstring and the README promise of the sample, for any seed of the test.
    sample = load_sample_trec()
    ev = {name: evaluate_run(sample.qrels, path, ["ndcg_cut.10", "map"])
          for name, path in sample.runs.items()}
    for seed in range(3):
        frame = compare(ev, baseline="bm25", random_state=seed).to_frame().reset_index()
        frame = frame[frame["system"] != "bm25"]
        significant = {f"{system} {metric}": bool(flag) for system, metric, flag in zip(
            frame["system"], frame["metric"], frame["significant"], strict=True)}
        assert len(significant) == 4
        assert sorted(k for k, v in significant.items() if v) == [
            "dense map", "dense ndcg_cut_10"], significant
