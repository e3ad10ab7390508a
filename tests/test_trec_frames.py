"""Qrels and runs as pandas and polars DataFrames, in PyTerrier's layout (``qid,
docno, score`` / ``qid, docno, label``) and ir_measures' (``query_id, doc_id,
score`` / ``query_id, doc_id, relevance``).

The frames are built from the sample collection's files by pandas' own parser
(not this package's readers); every frame must give the same table and the same
evaluation as the files, and ir_measures (pytrec_eval's trec_eval code) must agree.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_rank.datasets import load_sample_trec
from sklearn_rank.trec import Qrels, Run, evaluate_run, read_qrels, read_run

pl = pytest.importorskip("polars")

MEASURES = ["map", "P.5", "ndcg_cut.10", "recip_rank", "bpref", "err@20"]
NAMES = {  # layout -> (qid, docno, qrels value, run value)
    "PyTerrier": ("qid", "docno", "label", "score"),
    "ir_measures": ("query_id", "doc_id", "relevance", "score"),
}


def read_with_pandas(path, kind, ids_as=str):
    """A TREC file parsed by pandas: the ids as strings (or as pandas guesses)."""
    names = (["qid", "iter", "docno", "value"] if kind == "qrels"
             else ["qid", "q0", "docno", "rank", "value", "tag"])
    dtype = {"qid": str, "docno": str} if ids_as is str else None
    return pd.read_csv(path, sep=r"\s+", header=None, names=names, dtype=dtype)


def as_layout(raw, kind, layout, lib):
    qid, docno, label, score = NAMES[layout]
    columns = {qid: raw["qid"], docno: raw["docno"],
               (label if kind == "qrels" else score): raw["value"]}
    if kind == "run":
        columns["rank"] = raw["rank"]  # PyTerrier's results have one; it is ignored
    frame = pd.DataFrame(columns)
    return frame if lib == "pandas" else pl.from_pandas(frame)


@pytest.fixture(scope="module")
def sample():
    return load_sample_trec()


@pytest.mark.parametrize("lib", ["pandas", "polars"])
@pytest.mark.parametrize("layout", list(NAMES))
def test_frames_give_the_tables_and_numbers_of_the_files(sample, layout, lib):
    qrels_file = read_qrels(sample.qrels)
    qrels = as_layout(read_with_pandas(sample.qrels, "qrels"), "qrels", layout, lib)
    table = Qrels.from_frame(qrels)
    np.testing.assert_array_equal(table.qid, qrels_file.qid)
    np.testing.assert_array_equal(table.docno, qrels_file.docno)
    np.testing.assert_array_equal(table.rel, qrels_file.rel)
    for name, path in sample.runs.items():
        run = as_layout(read_with_pandas(path, "run"), "run", layout, lib)
        run_table = Run.from_frame(run, name=name)
        assert run_table.name == name
        np.testing.assert_array_equal(run_table.score, read_run(path).score)
        from_files = evaluate_run(sample.qrels, path, MEASURES)
        for given in ((qrels, run), (table, run), (qrels, run_table), (sample.qrels, run)):
            ev = evaluate_run(*given, MEASURES)
            np.testing.assert_array_equal(ev.qids, from_files.qids)
            for spec in from_files.per_query:
                np.testing.assert_array_equal(ev.per_query[spec], from_files.per_query[spec])


def test_integer_ids_are_their_decimal_strings(sample):
    """pandas reads the sample's topic numbers as integers: they still match the
    files' ids "401", ... exactly."""
    raw_qrels = read_with_pandas(sample.qrels, "qrels", ids_as=None)
    raw_run = read_with_pandas(sample.runs["bm25"], "run", ids_as=None)
    assert raw_qrels["qid"].dtype.kind == "i"
    qrels = as_layout(raw_qrels, "qrels", "PyTerrier", "pandas")
    run = as_layout(raw_run, "run", "PyTerrier", "pandas")
    assert Qrels.from_frame(qrels).qid[0] == "401"
    ev = evaluate_run(qrels, sample.runs["bm25"], MEASURES)  # a frame against a file
    from_files = evaluate_run(sample.qrels, sample.runs["bm25"], MEASURES)
    for spec in from_files.per_query:
        np.testing.assert_array_equal(ev.per_query[spec], from_files.per_query[spec])
    polars_ints = pl.from_pandas(run).with_columns(pl.col("qid").cast(pl.UInt16))
    assert evaluate_run(qrels, polars_ints, ["map"]).mean["map"] == from_files.mean["map"]


@pytest.mark.parametrize("lib", ["pandas", "polars"])
def test_ids_keep_their_exact_string_identity(lib):
    """"001" is not "1", "a" is not "a " nor "A"; unicode is kept."""
    def frame(columns):
        return pd.DataFrame(columns) if lib == "pandas" else pl.DataFrame(columns)

    qrels = frame({"qid": ["001", "001", "q é", "q é"], "docno": ["d1", "d2", "d1", "d1 "],
                   "label": [1, 0, 1, 0]})
    table = Qrels.from_frame(qrels)
    assert list(table.qid) == ["001", "001", "q é", "q é"]
    assert list(table.docno) == ["d1", "d2", "d1", "d1 "]
    run = frame({"qid": ["1", "1", "q é", "q é"], "docno": ["d1", "d2", "d1 ", "d1"],
                 "score": [2.0, 1.0, 2.0, 1.0]})
    ev = evaluate_run(qrels, run, ["recip_rank"])
    assert list(ev.qids) == ["q é"]  # "1" is not "001": that query is not in the run
    assert ev.per_query["recip_rank"].tolist() == [0.5]  # "d1 " ranks first, not relevant


def test_pyterrier_results_with_extra_columns(sample):
    """A PyTerrier transformer's results: qid, query, docno, docid, rank, score."""
    raw = read_with_pandas(sample.runs["dense"], "run")
    results = pd.DataFrame({"qid": raw["qid"], "query": "some text", "docno": raw["docno"],
                            "docid": np.arange(len(raw)), "rank": raw["rank"][::-1].to_numpy(),
                            "score": raw["value"]})
    ev = evaluate_run(sample.qrels, results, MEASURES)
    from_files = evaluate_run(sample.qrels, sample.runs["dense"], MEASURES)
    assert ev.mean == from_files.mean  # rank is ignored: trec_eval ranks by score


def test_ir_measures_agrees(sample):
    """ir_measures on the same pandas frames (its layout) gives the same numbers."""
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, RR, P, nDCG

    qrels = as_layout(read_with_pandas(sample.qrels, "qrels"), "qrels", "ir_measures",
                      "pandas")
    for path in sample.runs.values():
        run = as_layout(read_with_pandas(path, "run"), "run", "ir_measures", "pandas")
        theirs = ir_measures.calc_aggregate([AP, P @ 5, nDCG @ 10, RR], qrels, run)
        ours = evaluate_run(qrels, run, ["map", "P.5", "ndcg_cut.10", "recip_rank"],
                            convention="trec_eval").mean  # (map: trec_eval's, as AP)
        for measure, spec in ((AP, "map"), (P @ 5, "P.5"), (nDCG @ 10, "ndcg_cut.10"),
                              (RR, "recip_rank")):
            assert ours[spec] == pytest.approx(theirs[measure], abs=1e-12)


# ------------------------------------------------------------------------ errors


def test_a_frame_with_both_layouts_or_neither_names_the_columns():
    both = pd.DataFrame({"qid": ["1"], "docno": ["d"], "query_id": ["1"], "doc_id": ["d"],
                         "score": [1.0]})
    needed = (r"it needs the columns qid, docno, score \(PyTerrier\) or query_id, doc_id, "
              r"score \(ir_measures\)")
    with pytest.raises(ValueError, match=r"The run DataFrame has the id columns of both "
                                         r"layouts \(its columns: \['qid', 'docno', "
                                         r"'query_id', 'doc_id', 'score'\]\); " + needed):
        Run.from_frame(both)
    neither = pl.DataFrame({"query": ["1"], "doc": ["d"], "score": [1.0]})
    with pytest.raises(ValueError, match=r"The run DataFrame has the id columns of neither "
                                         r"layout.*" + needed):
        evaluate_run({"1": {"d": 1}}, neither)
    with pytest.raises(ValueError, match=r"The qrels DataFrame has the id columns of neither "
                                         r"layout.*it needs the columns qid, docno, label "
                                         r"\(PyTerrier\) or query_id, doc_id, relevance "
                                         r"\(ir_measures\)"):
        Qrels.from_frame(pd.DataFrame({"topic": ["1"], "docno": ["d"], "label": [1]}))


def test_a_missing_value_column_is_named():
    run_as_qrels = pd.DataFrame({"qid": ["1"], "docno": ["d"], "score": [1.0]})
    with pytest.raises(ValueError, match=r"The qrels DataFrame has PyTerrier's id columns "
                                         r"'qid' and 'docno' but no 'label' column \(its "
                                         r"columns: \['qid', 'docno', 'score'\]\); a PyTerrier "
                                         r"qrels has the columns qid, docno, label"):
        evaluate_run(run_as_qrels, run_as_qrels)
    with pytest.raises(ValueError, match=r"ir_measures's id columns 'query_id' and 'doc_id' "
                                         r"but no 'relevance' column"):
        Qrels.from_frame(pl.DataFrame({"query_id": ["1"], "doc_id": ["d"], "label": [1]}))
    with pytest.raises(ValueError, match=r"several columns named 'qid'"):
        Run.from_frame(pd.DataFrame([["1", "1", "d", 1.0]],
                                    columns=["qid", "qid", "docno", "score"]))


@pytest.mark.parametrize("lib", ["pandas", "polars"])
def test_ids_that_are_no_text_are_refused(lib):
    def run(qid):
        columns = {"qid": qid, "docno": ["d1", "d2"], "score": [1.0, 2.0]}
        return pd.DataFrame(columns) if lib == "pandas" else pl.DataFrame(columns)

    with pytest.raises(ValueError, match=r"Column 'qid' holds float64 values \(first: 1\.0\), "
                                         r"but ids are text"):
        Run.from_frame(run([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"Column 'qid' has a missing id at row 1 \(counted "
                                         r"from 0\) \(1 in all\)"):
        Run.from_frame(run(["1", None]))
    with pytest.raises(ValueError, match=r"Column 'qid' (has a missing id at row 1|holds "
                                         r"float64)"):
        Run.from_frame(run([1, None]))  # an int column with a gap
    with pytest.raises(ValueError, match=r"Column 'qid' holds bool values"):
        Run.from_frame(run([True, False]))


def test_pandas_missing_markers_and_mixed_objects():
    def run(qid):
        return pd.DataFrame({"qid": pd.Series(qid, dtype=object), "docno": ["d1", "d2"],
                             "score": [1.0, 2.0]})

    for missing in (np.nan, pd.NA, None):
        with pytest.raises(ValueError, match=r"Column 'qid' has a missing id at row 1"):
            Run.from_frame(run(["1", missing]))
    with pytest.raises(ValueError, match=r"Column 'qid' has a missing id at row 0"):
        Run.from_frame(run(pd.array([pd.NA, "1"], dtype="string[pyarrow]")))
    with pytest.raises(ValueError, match=r"Column 'qid' holds a bytes at row 1 \(counted from "
                                         r"0\): b'2'; ids are text"):
        Run.from_frame(run(["1", b"2"]))
    assert list(Run.from_frame(run(["1", 2])).qid) == ["1", "2"]  # ints in decimal
    assert list(Run.from_frame(run(pd.Categorical(["b", "a"]))).qid) == ["b", "a"]


def test_values_must_be_numbers():
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "label": [1, "high"]})
    with pytest.raises(ValueError, match=r"Column 'label' must hold numbers; row 1 \(counted "
                                         r"from 0\) holds 'high'"):
        Qrels.from_frame(frame)
    frame = pl.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "score": [1.0, None]})
    with pytest.raises(ValueError, match=r"score nan of document 'd2' for query '1' is not a "
                                         r"finite number"):
        evaluate_run({"1": {"d1": 1}}, frame)
    frame = pd.DataFrame({"qid": ["1"], "docno": ["d1"], "label": [1.5]})
    with pytest.raises(ValueError, match=r"rel 1\.5 .* is not an integer"):
        evaluate_run(frame, {"1": {"d1": 1.0}})


def test_not_a_frame_is_refused_by_the_declared_constraint():
    with pytest.raises(InvalidParameterError, match=r"(?s)The 'run' parameter of evaluate_run "
                                                    r"must be .*an instance of 'pandas or "
                                                    r"polars DataFrame'.* Got .* instead"):
        evaluate_run({"1": {"d1": 1}}, pd.Series([1.0]))
    with pytest.raises(TypeError, match=r"Run\.from_frame takes a pandas or polars DataFrame; "
                                        r"got dict"):
        Run.from_frame({"qid": ["1"]})
