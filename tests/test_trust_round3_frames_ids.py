"""Issue 24, items 5 and 6: every table follows a file's rules, and ids are kept exactly.

- A (qid, docno) pair listed twice is an error whatever the table's source
  (pandas and polars frames in both layouts, dicts whose keys read the same,
  the constructors, subtopic frames), naming both rows, as the file reader
  names both lines; and a run line with a seventh field that shifts the
  document id says so, instead of only "appears twice".
- Ids that are not UTF-8 keep their bytes: ``--format trec`` byte for byte as
  the trec_eval binary (``TREC_EVAL`` or ``/work/ref/trec_eval/trec_eval``
  when present, else the bytes it printed), JSON with ``\\udcXX`` escapes, CSV
  with the bytes, the table with ``\\xff``; in Python as ``surrogateescape``
  text. A query whose id is ``all`` stays apart from the summary.
"""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sklearn_rank.trec import (
    Qrels,
    Run,
    SubtopicQrels,
    evaluate_run,
    read_qrels,
    read_run,
    read_subtopic_qrels,
)

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

REF = "/work/ref/trec_eval/trec_eval"
TREC_EVAL = (os.environ.get("TREC_EVAL") or (REF if os.access(REF, os.X_OK) else "")
             or shutil.which("trec_eval") or "")
LIBRARIES = {"pandas": pd.DataFrame, "polars": pl.DataFrame}


def _cli(*args, check=True) -> subprocess.CompletedProcess:
    # stdout as under a UTF-8 locale (strict errors), where a lone surrogate
    # written as text would fail; the C locale's stdout would hide that
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    proc = subprocess.run([sys.executable, "-m", "sklearn_rank", *map(str, args)],
                          capture_output=True, timeout=300, env=env)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ============================================= a pair listed twice, from every source

# rows 1 and 3 list (q1, d1): the same document twice for one query
RUN_ROWS = {"qid": ["q1", "q1", "q2", "q1"], "docno": ["d2", "d1", "d1", "d1"],
            "score": [3.0, 2.0, 1.0, 0.5]}
QRELS_ROWS = {"qid": ["q1", "q1", "q2", "q1"], "docno": ["d2", "d1", "d1", "d1"],
              "label": [0, 2, 1, 0]}  # conflicting judgments of (q1, d1): 2 then 0
IR_MEASURES = {"qid": "query_id", "docno": "doc_id", "label": "relevance"}


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("layout", ["PyTerrier", "ir_measures"])
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_a_frame_listing_a_pair_twice_is_refused_naming_its_rows(library, layout, kind):
    rows = RUN_ROWS if kind == "run" else QRELS_ROWS
    if layout == "ir_measures":
        rows = {IR_MEASURES.get(name, name): values for name, values in rows.items()}
    frame = LIBRARIES[library](rows)
    other = (Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d1": 1}}) if kind == "run"
             else Run.from_dict({"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}))
    message = (f"The {kind} DataFrame: document 'd1' appears twice for query 'q1' (rows 1 "
               f"and 3, counted from 0)")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        (Run if kind == "run" else Qrels).from_frame(frame)
    with pytest.raises(ValueError, match="appears twice for query 'q1'"):
        evaluate_run(*((other, frame) if kind == "run" else (frame, other)), ["map"])


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_the_file_of_the_same_rows_is_refused_the_same_way(tmp_path, kind):
    """What the frames follow: the file reader's rule, lines for rows."""
    rows = RUN_ROWS if kind == "run" else QRELS_ROWS
    rows = zip(rows["qid"], rows["docno"], rows["score" if kind == "run" else "label"],
               strict=True)
    lines = [f"{q} Q0 {d} {i + 1} {v} tag" if kind == "run" else f"{q} 0 {d} {v}"
             for i, (q, d, v) in enumerate(rows)]
    path = _write(tmp_path / kind, ("\n".join(lines) + "\n").encode())
    reader = read_run if kind == "run" else read_qrels
    for engine in ("numpy", "pyarrow"):
        with pytest.raises(ValueError, match=r"document 'd1' appears twice for query 'q1' "
                                             r"\(lines 2 and 4\)"):
            reader(path, engine=engine)


@pytest.mark.parametrize("cls", [Qrels, Run])
def test_dicts_and_constructors_refuse_a_pair_twice(cls):
    """Dict keys are ids as text: 1 and "1" are one query."""
    with pytest.raises(ValueError, match=r"dict lists document 'd' twice for query '1': the "
                                         r"entries \[1\]\['d'\] and \['1'\]\['d'\]"):
        cls.from_dict({1: {"d": 1}, "1": {"d": 0}})
    with pytest.raises(ValueError, match=r"dict lists document '7' twice .*\['q'\]\[7\] and "
                                         r"\['q'\]\['7'\]"):
        cls.from_dict({"q": {7: 1, "7": 0}})
    with pytest.raises(ValueError, match=r"document 'b' appears twice for query 'a' \(rows 0 "
                                         r"and 2, counted from 0\)"):
        cls(["a", "c", "a"], ["b", "b", "b"], [1, 1, 0])
    assert len(cls.from_dict({"1": {"d": 1}, "2": {"d": 0}})) == 2  # one key each: fine


@pytest.mark.parametrize("library", LIBRARIES)
def test_subtopic_frames_refuse_a_document_twice_on_one_subtopic(library):
    frame = LIBRARIES[library]({"query_id": ["q", "q", "q"], "iteration": ["1", "2", "1"],
                                "doc_id": ["d", "d", "d"], "relevance": [1, 1, 0]})
    with pytest.raises(ValueError, match=r"The subtopic qrels DataFrame: document 'd' is judged "
                                         r"twice on subtopic '1' of query 'q' \(rows 0 and 2"):
        SubtopicQrels.from_frame(frame)
    fine = SubtopicQrels.from_frame(frame[:2])  # once on each subtopic: fine
    assert len(fine) == 2
    with pytest.raises(ValueError, match=r"judged twice on subtopic '1' .*\(lines 1 and 3\)"):
        read_subtopic_qrels(io.StringIO("q 1 d 1\nq 2 d 1\nq 1 d 0\n"))


# =================================================== a run line with seven fields

def test_a_seventh_field_that_shifts_the_document_id_is_named(tmp_path):
    """trec_eval's rule: fields after the sixth are ignored, so 'q1 0 Q0 d1 1
    2.0 run' reads the document 'Q0'; the binary then stops ("duplicate docs
    Q0"). The error says the line's field count, the file and the line."""
    qrels = _write(tmp_path / "qrels", b"q1 0 d1 1\nq1 0 d2 0\n")
    shifted = _write(tmp_path / "run", b"q1 Q0 d1 1 2.0 run\nq1 0 Q0 d2 2 1.0 run\n"
                                       b"q1 0 Q0 d3 3 0.5 run\n")
    message = (f"{shifted}: line 2 has 7 fields, where a run line has 6 (qid Q0 docno rank "
               "score tag); the fields after the sixth are ignored, as trec_eval ignores "
               "them, so its document id is its third field, 'Q0', which then appears twice "
               "for query 'q1' (lines 2 and 3)")
    for engine in ("numpy", "pyarrow"):
        with pytest.raises(ValueError) as info:
            read_run(shifted, engine=engine)
        assert str(info.value).startswith(message)
    proc = _cli("evaluate", qrels, shifted, "-m", "map", check=False)
    assert proc.returncode == 2 and proc.stdout == b""
    stderr = proc.stderr.decode()
    assert stderr.count("\n") == 1 and "line 2 has 7 fields" in stderr
    if TREC_EVAL:
        binary = subprocess.run([TREC_EVAL, str(qrels), str(shifted)], capture_output=True)
        assert binary.returncode != 0 and b"duplicate docs Q0" in binary.stderr
    # a seventh field that shifts nothing is ignored, as by trec_eval
    extra = _write(tmp_path / "extra", b"q1 Q0 d1 1 2.0 run x\nq1 Q0 d2 2 1.0 run y z\n")
    plain = _write(tmp_path / "plain", b"q1 Q0 d1 1 2.0 run\nq1 Q0 d2 2 1.0 run\n")
    assert _cli("trec_eval", qrels, extra).stdout == _cli("trec_eval", qrels, plain).stdout
    # a duplicate on six-field lines keeps the plain message (another line has 7)
    with pytest.raises(ValueError, match=r"document 'd1' appears twice for query 'q1' \(lines "
                                         r"2 and 3\); each run lists"):
        read_run(io.BytesIO(b"q1 Q0 d2 1 2.0 run x\nq1 Q0 d1 1 2.0 run\nq1 Q0 d1 2 1.0 run\n"))


# ================================================================ ids kept exactly

QRELS_BYTES = b"q\xff 0 d1 1\nq\xfe 0 d1 1\nq\xfe 0 d\xff 0\n"
RUN_BYTES = b"q\xff Q0 d1 1 2.0 r\xff\nq\xfe Q0 d\xff 1 2.0 r\xff\nq\xfe Q0 d1 2 1.0 r\xff\n"
# trec_eval 10.0's output of `-q -m map -m P.1 -m runid` on these files
TREC_BYTES = (b"map                   \tq\xfe\t0.5000\nP_1                   \tq\xfe\t0.0000\n"
              b"map                   \tq\xff\t1.0000\nP_1                   \tq\xff\t1.0000\n"
              b"runid                 \tall\tr\xff\nmap                   \tall\t0.7500\n"
              b"P_1                   \tall\t0.5000\n")


@pytest.fixture
def latin1(tmp_path):
    return (_write(tmp_path / "qrels", QRELS_BYTES), _write(tmp_path / "run", RUN_BYTES))


def test_trec_output_is_byte_for_byte_trec_eval(latin1):
    args = ["-q", "-m", "map", "-m", "P.1", "-m", "runid", *latin1]
    expected = TREC_BYTES
    if TREC_EVAL:
        expected = subprocess.run([TREC_EVAL, *map(str, args)], capture_output=True,
                                  check=True).stdout
        assert expected == TREC_BYTES  # (the pinned bytes are the binary's)
    assert _cli("trec_eval", *args).stdout == expected
    assert _cli("evaluate", "--format", "trec", *args).stdout == expected


def test_json_escapes_bytes_that_are_not_utf8_without_collisions(latin1):
    out = _cli("evaluate", "-q", "--format", "json", "-m", "map", *latin1).stdout
    assert out.isascii()
    doc = json.loads(out)["runs"]
    assert list(doc) == ["r\udcff"]
    run = doc["r\udcff"]
    assert run["n_queries"] == 2
    want = {_text(b"q\xfe"): 0.5, _text(b"q\xff"): 1.0}  # ("q\udcfe", "q\udcff")
    assert run["per_query"]["map"] == pytest.approx(want, rel=1e-12)
    assert {q.encode("utf-8", "surrogateescape") for q in run["per_query"]["map"]} == {
        b"q\xfe", b"q\xff"}


def test_csv_keeps_the_bytes_and_the_table_shows_them(latin1):
    out = _cli("evaluate", "-q", "--format", "csv", "-m", "map", *latin1).stdout
    rows = list(csv.reader(io.StringIO(out.decode("utf-8", "surrogateescape"))))
    assert rows[0] == ["run", "measure", "qid", "value", "summary"]
    assert [(r[0].encode("utf-8", "surrogateescape"), r[2].encode("utf-8", "surrogateescape"),
             float(r[3]), r[4]) for r in rows[1:]] == [
        (b"r\xff", b"q\xfe", pytest.approx(0.5, rel=1e-12), "0"),
        (b"r\xff", b"q\xff", pytest.approx(1.0, rel=1e-12), "0"),
        (b"r\xff", b"all", pytest.approx(0.75, rel=1e-12), "1")]
    table = _cli("evaluate", "-q", "-m", "map", *latin1).stdout.decode("ascii")
    assert "map [q\\xfe]  0.5000" in table and "map [q\\xff]  1.0000" in table
    assert table.splitlines()[0].split() == ["measure", "r\\xff"]


def test_python_keeps_ids_exactly(latin1):
    qrels, run = read_qrels(latin1[0]), read_run(latin1[1])
    assert run.qid.tolist() == ["q\udcff", "q\udcfe", "q\udcfe"] and run.name == "r\udcff"
    ev = evaluate_run(qrels, run, ["map"])
    assert [q.encode("utf-8", "surrogateescape") for q in ev.qids] == [b"q\xfe", b"q\xff"]
    again = Run(run.qid, run.docno, run.score)  # the texts give back the same ids
    assert [q.encode("utf-8", "surrogateescape") for q in again.qid] == [
        b"q\xff", b"q\xfe", b"q\xfe"]
    assert evaluate_run(qrels, again, ["map"]).per_query["map"] == pytest.approx(
        ev.per_query["map"], rel=1e-12)
    from_bytes = Run([b"q\xff"], [b"d1"], [1.0])
    assert from_bytes.qid.tolist() == ["q\udcff"]
    with pytest.raises(ValueError, match=r"qid 'q\\ud800' holds the lone surrogate U\+D800"):
        Run(["q\ud800"], ["d"], [1.0])


# ============================================================ a query named 'all'

def test_a_query_named_all_stays_apart_from_the_summary(tmp_path):
    qrels = _write(tmp_path / "qrels", b"all 0 d1 1\nq1 0 d1 1\nq1 0 d2 0\n")
    run = _write(tmp_path / "run", b"all Q0 d2 1 2.0 r\nall Q0 d1 2 1.0 r\nq1 Q0 d1 1 2.0 r\n")
    rows = list(csv.reader(io.StringIO(
        _cli("evaluate", "-q", "--format", "csv", "-m", "map", qrels, run).stdout.decode())))
    assert [(q, float(v), s) for _, _, q, v, s in rows[1:]] == [
        ("all", pytest.approx(0.5, rel=1e-12), "0"), ("q1", pytest.approx(1.0, rel=1e-12), "0"),
        ("all", pytest.approx(0.75, rel=1e-12), "1")]
    table = _cli("evaluate", "-q", "-m", "map", qrels, run).stdout.decode().splitlines()
    assert [line.split() for line in table[2:5]] == [
        ["map", "[all]", "0.5000"], ["map", "[q1]", "1.0000"], ["map", "0.7500"]]
    doc = json.loads(_cli("evaluate", "-q", "--format", "json", "-m", "map", qrels, run).stdout)
    assert doc["runs"]["r"]["per_query"]["map"] == pytest.approx({"all": 0.5, "q1": 1.0},
                                                                 rel=1e-12)
