"""trec_eval's parameterisations on the registry's kernels: ``set_F.beta`` is
``f1(beta=...)``, ``ndcg``'s gain pairs ``ndcg(gains=...)``, and a negative ``-l``
counts unjudged documents by rank (in the registry's kernels and the trec
engine's reverse scans alike).

Each case is checked against the trec_eval 10.0 binary's output for the same
generated files (when ``TREC_EVAL`` names it or ``trec_eval`` is on the PATH;
without it, against a copy of what that binary printed,
``tests/data/trec_eval_kernels_binary.json.gz``, which a run with the binary
also checks; rewrite it with ``TREC_EVAL=/path python
tests/test_trec_eval_kernels.py``) and against brute-force formulas.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sklearn_rank.cli._trec_eval import trec_output
from sklearn_rank.metrics import f1_at_k_score, ndcg_score, parse_metric
from sklearn_rank.metrics._families.trec_eval.measures import KERNELS, twin_specs
from sklearn_rank.metrics._vocab.trec_eval_table import parse_measures
from sklearn_rank.trec import trec_eval

TREC_EVAL = os.environ.get("TREC_EVAL") or shutil.which("trec_eval") or ""
PINNED = Path(__file__).parent / "data" / "trec_eval_kernels_binary.json.gz"

TWIN_MEASURES = ["P.5,10", "recall.5,10", "map", "gm_map", "map_cut.5,10", "Rprec",
                 "recip_rank", "success.1,5", "set_P", "set_recall", "set_F", "ndcg",
                 "ndcg_cut.5", "bpref", "num_rel", "num_rel_ret"]
#: (name, flags): what the binary printed for each, on the generated files
CASES = {
    **{f"l{level}": ["-q", "-c", "-l", str(level), *(f"-m{m}" for m in TWIN_MEASURES)]
       for level in (-1, -2, -3, 0, 1)},
    **{f"set_F.{beta}": ["-q", "-c", f"-mset_F.{beta}"]
       for beta in ("0.5", "2", "0", "-1", "1.5,2", "0.25")},
    "set_F.3 -l-1": ["-q", "-c", "-l", "-1", "-mset_F.3"],
    **{f"all_trec l{level}": ["-q", "-c", "-l", str(level), "-mall_trec",
                              "-miprec_at_recall.0.25,0.5,.75"] for level in (-1, -2)},
    "11pt_avg unsorted l-1": ["-q", "-c", "-l", "-1", "-m11pt_avg.0.9,0.1"],
    "J l-1": ["-q", "-c", "-J", "-l", "-1"],
    # gain pairs: fractional gains (trec_eval's truncated comparator keeps them
    # out of order), negative ones, unjudged codes, repeated levels, odd names
    **{f"ndcg.{pairs}": ["-q", "-c", f"-mndcg.{pairs}"]
       for pairs in ("1=3,2=9", "1=2.5,2=2.2", "2=2.2,1=2.5", "1=0.5,2=0.7,3=1.2", "0=1,1=-1",
                     "-1=1", "-2=4,0=0.5", "1=3,1=5", "a=3", "3=0,2=1", "1=3,2=9,4=4.5")},
    "ndcg.2=2.2,1=2.5 -J -M5 -l-1": ["-q", "-c", "-J", "-M5", "-l", "-1",
                                      "-mndcg.2=2.2,1=2.5"],
    **{f"dcg.{pairs}": ["-q", "-c", "-mdcg", f"-mdcg.{pairs}"]
       for pairs in ("1=3,2=9", "1=2.5,2=2.2", "0=1,1=-1", "-1=1", "-2=4,0=0.5", "a=3")},
}


def _collection(seed: int) -> tuple[str, str]:
    """qrels and run text: graded, negative (-1, -2) and missing judgments,
    unjudged retrieved documents, tied scores, a query judged only at
    negative levels, a judged query the run lacks and one only the run has."""
    rng = random.Random(seed)
    qrels, run = [], []
    for i in range(14):
        docs = [f"d{j:03d}" for j in rng.sample(range(300), 80)]
        for d in docs[:40]:
            level = rng.choice([-1, -2]) if i == 4 else rng.choice([0, 0, 1, 1, 2, 3, -1, -2])
            qrels.append(f"q{i} 0 {d} {level}")
        if i != 9:
            for rank, d in enumerate(rng.sample(docs[20:] + docs[:10], 20 + i)):
                run.append(f"q{i} Q0 {d} {rank} {rng.randint(0, 8) / 2} tag")
    run.append("qx Q0 zz 1 1.0 tag")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("kernels")
    qrels, run = _collection(26)
    (directory / "qrels").write_text(qrels)
    (directory / "run").write_text(run)
    return directory / "qrels", directory / "run"


def _binary(qrels_path, run_path, flags) -> str:
    return subprocess.run([TREC_EVAL, *flags, str(qrels_path), str(run_path)],
                          capture_output=True, check=True).stdout.decode()


def _printed(key: str, qrels_path, run_path) -> str:
    pinned = json.loads(gzip.decompress(PINNED.read_bytes()))
    if not TREC_EVAL:
        return pinned[key]
    text = _binary(qrels_path, run_path, CASES[key])
    assert text == pinned[key], key
    return text


def _ours(flags: list[str], qrels_path, run_path) -> str:
    """The drop-in's output for ``flags`` (each case has ``-q -c``)."""
    level, measures, i, max_retrieved = 1, [], 0, None
    while i < len(flags):
        if flags[i] == "-l":
            level, i = int(flags[i + 1]), i + 1
        elif flags[i].startswith("-m"):
            measures.append(flags[i][2:])
        elif flags[i].startswith("-M"):
            max_retrieved = int(flags[i][2:])
        i += 1
    return trec_output(str(qrels_path), [str(run_path)], measures, per_query=True,
                       complete=True, level=level, judged_only="-J" in flags,
                       max_retrieved=max_retrieved)


@pytest.mark.parametrize("key", sorted(CASES))
def test_drop_in_prints_the_binarys_bytes(files, key):
    assert _ours(CASES[key], *files) == _printed(key, *files)


@pytest.mark.parametrize("key", ["all_trec l-1", "all_trec l-2", "J l-1", "l1", "l0",
                                 "ndcg.1=3,2=9", "dcg.0=1,1=-1"])
def test_drop_in_does_not_depend_on_the_block_size(files, key, monkeypatch):
    """trec_eval's rankings are cut into blocks of up to ``_BLOCK_CELLS_IN_ORDER``
    cells (all of these queries fit in one or two): blocks of a query or two
    print the same bytes."""
    from sklearn_rank.metrics._engine import ranking

    monkeypatch.setattr(ranking, "_BLOCK_CELLS_IN_ORDER", 7)
    assert _ours(CASES[key], *files) == _printed(key, *files)


def test_no_trec_engine_kernel_beside_a_registry_twin():
    from sklearn_rank.metrics._vocab.trec_eval_table import TWINS

    assert not set(KERNELS) & set(TWINS)
    assert {"set_F", "ndcg", "dcg"} <= set(TWINS)
    parsed = parse_measures(["set_F.0.5", "ndcg.2=2.2,a=1,1=3"])
    assert twin_specs("set_F", parsed["set_F"]) == [("set_F_0.5", "f1(beta=0.5)")]
    assert twin_specs("ndcg", parsed["ndcg"]) == [
        ("ndcg_2=2.2,a=1,1=3", "ndcg(gain='linear', gains='2=2.2,1=3.0')")]
    assert twin_specs("ndcg", parse_measures(["ndcg.a=3"])["ndcg"]) == [
        ("ndcg_a=3", "ndcg(gain='linear')")]
    assert twin_specs("dcg", parse_measures(["dcg.1=3,2=9"])["dcg"]) == [
        ("dcg_1=3,2=9", "dcg(gain='linear', gains='1=3.0,2=9.0')")]


def _reference(qrels: dict, run: dict, level: int) -> dict:
    """trec_eval's loops, written out per query (its C, transcribed): codes -1
    (not in the qrels) and -2 (a negative level) count where ``code >= level``."""
    out = {}
    for q, judged in qrels.items():
        # decreasing score, ties by decreasing docno
        ranked = sorted(run.get(q, {}).items(), key=lambda x: (x[1], x[0]), reverse=True)
        codes = [(-1 if d not in judged else (-2 if judged[d] < 0 else judged[d]))
                 for d, _ in ranked]
        num_rel = sum(1 for v in judged.values() if v >= max(level, 0))
        num_rel_ret = sum(1 for c in codes if c >= 0 and c >= level)
        hits = [c >= level for c in codes]
        total, so_far = 0.0, 0
        for i, h in enumerate(hits):
            if h:
                so_far += 1
                total += so_far / (i + 1.0)
        out[q] = {
            "P_5": sum(hits[:5]) / 5.0,
            "map": (total / num_rel if num_rel else np.inf) if so_far else 0.0,
            "recip_rank": next((1.0 / (i + 1) for i, h in enumerate(hits) if h), 0.0),
            "set_P": num_rel_ret / len(codes) if codes else 0.0,
            "recall_10": sum(hits[:10]) / num_rel if num_rel else 0.0,
        }
    return out


@pytest.mark.parametrize("level", [-2, -1, 0, 2])
def test_negative_levels_equal_trec_evals_loops(level):
    qrels_text, run_text = _collection(7)
    qrels, run = {}, {}
    for line in qrels_text.splitlines():
        q, _, d, v = line.split()
        qrels.setdefault(q, {})[d] = int(v)
    for line in run_text.splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    run = {q: docs for q, docs in run.items() if q in qrels}
    found = trec_eval(qrels, run, ["P.5", "map", "recip_rank", "set_P", "recall.10"],
                      relevance_level=level, complete=True)
    expected = _reference(qrels, run, level)
    for i, q in enumerate(found.qids):
        if q not in run:
            continue  # (-c: trec_eval's values of a query the run lacks are the binary's test)
        for name, value in expected[q].items():
            assert found.per_query[name][i] == pytest.approx(value, rel=1e-12), (q, name)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0, 3.7])
def test_f_beta_is_van_rijsbergens_and_trec_evals(beta):
    rng = np.random.default_rng(int(beta * 10))
    y = rng.integers(0, 3, size=(6, 15))
    y[0] = 0  # a query without relevant documents
    s = rng.random((6, 15))
    for k in (3, 10, None):
        per_query_text, per_query_trec = [], []
        for labels, scores in zip(y, s, strict=True):
            order = np.argsort(-scores, kind="stable")
            top = labels[order][:k] if k else labels[order]
            hits, n_rel = float((top >= 1).sum()), float((labels >= 1).sum())
            p, r = (hits / len(top), hits / n_rel) if hits else (0.0, 0.0)
            b2 = beta * beta
            per_query_text.append((1 + b2) * p * r / (b2 * p + r) if hits else 0.0)
            per_query_trec.append((beta + 1) * p * r / (beta * p + r) if hits else 0.0)
        got = f1_at_k_score(y, s, k=k, beta=beta)
        assert got == pytest.approx(np.mean(per_query_text), rel=1e-12)
        got = f1_at_k_score(y, s, k=k, beta=beta, convention="trec_eval")
        assert got == pytest.approx(np.mean(per_query_trec), rel=1e-12)
    assert str(parse_metric("f1(beta=2)@5")) == "f1(beta=2)@5"
    assert str(parse_metric("f1(beta=1)")) == "f1"


@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_gains_override_the_gain_of_their_levels(gain):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, size=(5, 12))
    s = rng.integers(0, 5, size=(5, 12)).astype(float)  # ties: averaged
    base = (lambda v: v) if gain == "linear" else (lambda v: 2.0 ** v - 1)
    table = {0: base(0), 1: 0.5, 2: base(2), 3: 7.0}  # the first pair of level 1 wins
    for k in (3, None):
        got = ndcg_score(y, s, k=k, gain=gain, gains="1=0.5,3=7,1=9")
        assert got == pytest.approx(ndcg_score(y, s, k=k, gain=table), rel=1e-12)
    with pytest.raises(ValueError, match="gains must be 'level=gain' pairs"):
        ndcg_score(y, s, gains="1:3")
    with pytest.raises(ValueError, match="gains must be finite and >= 0"):
        ndcg_score(y, s, gains="1=-3")


def test_trec_mode_gains_are_trec_evals_formula():
    # integer gains: trec_eval's ideal is the decreasing order; DCG adds
    # gain / log2(rank + 1) rank by rank over the nonzero gains
    qrels_text, run_text = _collection(11)
    qrels, run = {}, {}
    for line in qrels_text.splitlines():
        q, _, d, v = line.split()
        qrels.setdefault(q, {})[d] = int(v)
    for line in run_text.splitlines():
        q, _, d, _, sc, _ = line.split()
        if q in qrels:
            run.setdefault(q, {})[d] = float(sc)
    gains = {0: 0.0, 1: 3.0, 2: 9.0, 3: 4.0}
    found = trec_eval(qrels, run, ["ndcg.1=3,2=9,3=4"], complete=True)
    for i, q in enumerate(found.qids):
        if q not in run or all(v < 0 for v in qrels[q].values()):
            continue  # (-c, and trec_eval's level counts carried over from the query before)
        ranked = sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)
        dcg = 0.0
        for r, (d, _) in enumerate(ranked):
            g = gains.get(qrels[q].get(d, -1), 0.0)
            if g != 0:
                dcg += g / math.log2(r + 2)
        ideal = sorted((gains[v] for v in qrels[q].values() if v >= 0), reverse=True)
        idcg = 0.0
        for r, g in enumerate(g for g in ideal if g > 0):
            idcg += g / math.log2(r + 2)
        expected = dcg / idcg if idcg > 0 else 0.0
        assert found.per_query["ndcg_1=3,2=9,3=4"][i] == pytest.approx(expected, rel=1e-12)


def test_an_infinite_set_f_parameter_is_refused():
    with pytest.raises(ValueError, match="finite number"):
        trec_eval({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["set_F.1e999"])


@pytest.mark.parametrize("level", [-2, -1, 0, 2])
def test_evaluate_run_with_trec_eval_names_is_the_drop_in_at_any_level(files, level):
    """trec_eval's names through evaluate_run (and the command's default table)
    give the drop-in's numbers under a negative -l too: the rows carry
    trec_eval's relevance codes, so unjudged documents count as trec_eval's
    loops count them."""
    from sklearn_rank.trec import evaluate_run

    measures = ["P.5", "recall.10", "map_cut.10", "Rprec", "recip_rank", "success.5",
                "ndcg_cut.5", "set_P", "P.10", "num_rel_ret"]
    qrels_path, run_path = map(str, files)
    if level < 0:  # the judged query q9 the run lacks: trec_eval's dummy document (-c)
        with pytest.raises(ValueError, match=r"lacks 1 judged queries \(first 'q9'\).*--format"):
            evaluate_run(qrels_path, run_path, measures, relevance_level=level, complete=True)
        qrels_path = str(files[0].with_name("qrels_without_q9"))
        Path(qrels_path).write_text("".join(line for line in files[0].open()
                                            if not line.startswith("q9 ")))
    expected = trec_eval(qrels_path, run_path, measures, relevance_level=level, complete=True)
    found = evaluate_run(qrels_path, run_path, measures, relevance_level=level, complete=True)
    assert list(found.qids) == list(expected.qids)
    for name in expected.per_query:
        np.testing.assert_allclose(found.per_query[name], expected.per_query[name],
                                   rtol=1e-12, atol=0, err_msg=name)


def _pin(directory: Path) -> None:
    qrels, run = _collection(26)
    (directory / "qrels").write_text(qrels)
    (directory / "run").write_text(run)
    pinned = {key: _binary(directory / "qrels", directory / "run", flags)
              for key, flags in CASES.items()}
    PINNED.parent.mkdir(exist_ok=True)
    text = json.dumps(pinned, separators=(",", ":")) + "\n"
    PINNED.write_bytes(gzip.compress(text.encode(), mtime=0))


if __name__ == "__main__":  # TREC_EVAL=/path/to/trec_eval python tests/test_trec_eval_kernels.py
    import tempfile

    if not TREC_EVAL:
        sys.exit("set TREC_EVAL to a trec_eval 10.0 binary")
    with tempfile.TemporaryDirectory() as tmp:
        _pin(Path(tmp))

