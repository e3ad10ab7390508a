"""Tests of sklearn_rank.trec: reading qrels and runs, and trec_eval parity.

The parity tests compare :func:`evaluate_run` with pytrec_eval (trec_eval's C
code inside) query by query on generated collections; the semantics they rely on
were read in trec_eval's source (usnistgov/trec_eval):

* ``form_res_rels.c``: the run is sorted by decreasing score, ties by
  ``strcmp`` of the document ids, decreasing (bytes, so UTF-8 ids sort by code
  point); the rank column of a run file is ignored. A document missing from the
  qrels is "not in the pool" (-1), a negative level in the qrels is "in the
  pool but unjudged" (-2): neither is relevant nor judged non-relevant; only
  levels >= 0 count in the per-level totals (``num_rel`` counts every judged
  relevant document, retrieved or not). ``-J`` drops both kinds of unjudged
  documents before ranking, keeping the tie order.
* ``m_ndcg.c``: the gain is the relevance level (``-l`` does not change it);
  the ideal ranking comes from every judged document of the query.
* ``m_bpref.c``: unjudged documents are skipped; the judged non-relevant count
  is the number of judged documents below ``relevance_level``.
* ``m_gm_map.c``: the per-query value is ``log(max(AP, 1e-5))``; the mean is
  ``exp`` of their mean.
* ``trec_eval.c``: ``-c`` gives a query judged but absent from the run a
  single unjudged document ("ceci_nest_pas_un_docno"), so it scores 0 in every
  measure (``log(1e-5)`` for gm_map) and the means are over every judged query.
* ``trec_format.h`` / ``get_trec_results.c``: trec_eval itself (not only
  pytrec_eval) stores scores as C ``float`` (float32), so the generated scores
  are multiples of 1/64, exact in float32; ``get_qrels.c`` reads levels with
  ``atol`` (integers).

pytrec_eval (pytrec-eval-terrier 0.5.11) evaluates the queries both in the
qrels and in the run, accepts negative levels, returns gm_map per query as the
log, refuses ``relevance_level < 1`` (trec_eval's ``-l0`` cannot be compared)
and has no ``-c`` flag: the tests build trec_eval's ``-c`` input (the bogus
document) themselves. ``judged_docs_only_flag`` is trec_eval's ``-J``.
"""

from __future__ import annotations

import gzip
import io
import math
import re
import sys

import numpy as np
import pytest

from sklearn_rank._utils import hashing as _hashing
from sklearn_rank._utils.hashing import _words, hash64, hash_words
from sklearn_rank.trec import Qrels, Run, _arrow, _io, _join, evaluate_run, read_qrels, read_run
from sklearn_rank.trec._column import IdColumn

ATOL = 1e-9  # trec_eval computes in double; only the ranking depends on float32 scores

# trec_eval measure names as passed to evaluate_run and to pytrec_eval. The
# cut-offs include 30, longer than most of the generated lists.
MEASURES = [
    "map", "map_cut.5,10,30", "P.5,10,30", "recall.5,10,30", "ndcg", "ndcg_cut.5,10,30",
    "recip_rank", "Rprec", "bpref", "gm_map", "success.1,5,10", "set_P", "set_recall",
    "set_F",
]
BOGUS_DOCNO = "ceci_nest_pas_un_docno"  # trec_eval -c's document for a missing query


def _pytrec_eval():
    import pytrec_eval

    return pytrec_eval


# =========================================================================== readers


def _rows(table) -> set:
    values = table.rel if isinstance(table, Qrels) else table.score
    return set(zip(table.qid.tolist(), table.docno.tolist(), values.tolist(), strict=True))


QRELS_TEXT = (
    "# judged by assessor 7\n"
    "\n"
    "007\t0\tdoc-1.a\t2\n"
    "007  0   doc-2\t\t0\n"
    "  q2 0 文档 1  \n"
    "q2 Q0 doc#3 -1\n"
    "   # an indented comment\n"
    " \t \n"
    "7 0 d1 3\n"
)
QRELS_ROWS = {
    ("007", "doc-1.a", 2.0),
    ("007", "doc-2", 0.0),
    ("q2", "文档", 1.0),
    ("q2", "doc#3", -1.0),
    ("7", "d1", 3.0),
}
RUN_TEXT = (
    "# produced by my-run\n"
    "007 Q0 doc-1.a 1 1.5 my-run\n"
    "007\tQ0\tdoc-9\t7\t-2\tmy-run\n"
    "\n"
    "q2  Q0  文档  1  0.25  my-run\n"
    "7 Q0 d1 3 1e-3 my-run\n"
    "7 Q0 D1 3 3 my-run\n"
)
RUN_ROWS = {
    ("007", "doc-1.a", 1.5),
    ("007", "doc-9", -2.0),
    ("q2", "文档", 0.25),
    ("7", "d1", 1e-3),
    ("7", "D1", 3.0),
}


def _write(path, text: str, compressed: bool = False):
    if compressed:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(params=["pyarrow", "numpy"])
def parser(request):
    """The engine= of the readers: pyarrow's CSV reader where it applies, or NumPy only."""
    if request.param == "pyarrow":
        pytest.importorskip("pyarrow")
    return request.param


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_read_qrels_round_trip(tmp_path, compressed, parser):
    path = _write(tmp_path / "qrels.txt", QRELS_TEXT, compressed)
    qrels = read_qrels(path, engine=parser)
    assert isinstance(qrels, Qrels)
    assert len(qrels) == 5
    assert _rows(qrels) == QRELS_ROWS  # "007" stays "007"; "#", "." and non-ASCII kept
    assert qrels.qid.dtype.kind == "U" and qrels.docno.dtype.kind == "U"
    assert _rows(read_qrels(str(path), engine=parser)) == QRELS_ROWS


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_read_run_round_trip(tmp_path, compressed, parser):
    path = _write(tmp_path / "run.txt", RUN_TEXT, compressed)
    run = read_run(path, engine=parser)
    assert isinstance(run, Run)
    assert run.name == "my-run"
    assert _rows(run) == RUN_ROWS  # "d1" and "D1" are different documents
    assert _rows(read_run(str(path), engine=parser)) == RUN_ROWS


def test_readers_accept_buffers_and_crlf(tmp_path, parser):
    assert _rows(read_qrels(io.StringIO(QRELS_TEXT), engine=parser)) == QRELS_ROWS
    assert _rows(read_qrels(io.BytesIO(QRELS_TEXT.encode()), engine=parser)) == QRELS_ROWS
    assert _rows(read_run(io.StringIO(RUN_TEXT), engine=parser)) == RUN_ROWS
    with open(_write(tmp_path / "run.txt", RUN_TEXT), "rb") as f:
        assert _rows(read_run(f, engine=parser)) == RUN_ROWS
    crlf = read_qrels(io.BytesIO(b"q1 0 d1 1\r\nq1 0 d2 0\r\n"), engine=parser)
    assert _rows(crlf) == {("q1", "d1", 1.0), ("q1", "d2", 0.0)}
    gz = tmp_path / "qrels.gz"
    gz.write_bytes(gzip.compress(QRELS_TEXT.encode()))
    with open(gz, "rb") as f:
        assert _rows(read_qrels(f, engine=parser)) == QRELS_ROWS


def test_from_dict():
    qrels = Qrels.from_dict({"007": {"doc-1.a": 2, "文档": 0}, 7: {"d1": 1}})
    assert _rows(qrels) == {("007", "doc-1.a", 2.0), ("007", "文档", 0.0), ("7", "d1", 1.0)}
    run = Run.from_dict({"007": {"doc-1.a": 0.5}, "q2": {"d1": -1, "d2": 3}}, name="bm25")
    assert run.name == "bm25"
    assert _rows(run) == {("007", "doc-1.a", 0.5), ("q2", "d1", -1.0), ("q2", "d2", 3.0)}
    assert Run.from_dict({"q": {"d": 1.0}}).name == "run"
    assert repr(qrels) == "Qrels(3 judgments, 2 queries, 2 with level > 0)"
    assert repr(run) == "Run('bm25', 3 documents, 2 queries)"


@pytest.mark.parametrize("reader, text, compressed",
                         [(read_qrels, QRELS_TEXT, False), (read_run, RUN_TEXT, True)])
def test_progress_callback(tmp_path, reader, text, compressed, parser):
    path = _write(tmp_path / "input.txt", text, compressed)
    calls = []
    reader(path, progress=lambda *args: calls.append(args), engine=parser)
    size = path.stat().st_size  # bytes of the file as stored (compressed)
    assert calls
    assert calls[-1] == (str(path), size, size)
    assert all(c[0] == str(path) and 0 < c[1] <= size for c in calls)


def _raises(reader, tmp_path, text, message, name="input.txt", engine="auto"):
    path = _write(tmp_path / name, text)
    with pytest.raises(ValueError, match=re.escape(f"{path}: {message}")):
        reader(path, engine=engine)


@pytest.mark.parametrize(
    "text, message",
    [
        ("q1 0 d1 1\nq1 0 d2\n", "line 2: expected 4 fields (qid iter docno rel), got 3."),
        # comment and blank lines count in the line numbers
        ("# header\n\nq1 0 d1 1\n  # note\n\t\nq1 0 d2 1 extra\n",
         "line 6: expected 4 fields (qid iter docno rel), got 5."),
        ("q1 0 d1 1\n\n\nq1\n", "line 4: expected 4 fields (qid iter docno rel), got 1."),
        ("q1 0 d1 1\n# c\nq1 0 d2 high\n",
         "line 3: relevance level 'high' is not a finite number."),
        ("q1 0 d1 nan\n", "line 1: relevance level 'nan' is not a finite number."),
        ("\nq1 0 d1 1e999\n", "line 2: relevance level '1e999' is not a finite number."),
        ("q1 0 d1 1\n# c\nq1 0 d2 0\n\nq1 0 d1 0\n",
         "document 'd1' appears twice for query 'q1' (lines 1 and 5); each qrels file lists "
         "a document once per query."),
        ("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 0\nq1 0 d1 0\n",
         "document 'd1' appears twice for query 'q1' (lines 1 and 4); each qrels file lists "
         "a document once per query."),
        ("q1 0 d1 1\nq1 0 d2 NA\n", "line 2: relevance level 'NA' is not a finite number."),
        ("q1 0 d1 1\nq1 0 d2 \n", "line 2: expected 4 fields (qid iter docno rel), got 3."),
        ("q1 0 d1 1\nq1  d2 1\n", "line 2: expected 4 fields (qid iter docno rel), got 3."),
    ],
)
def test_read_qrels_errors(tmp_path, text, message, parser):
    _raises(read_qrels, tmp_path, text, message, "judgments.qrels", parser)


@pytest.mark.parametrize(
    "text, message",
    [
        ("q1 Q0 d1 1 0.5\n", "line 1: expected 6 fields (qid Q0 docno rank score tag), got 5."),
        # (text after the sixth field is ignored, as by trec_eval: see test_trust_trec_files)
        ("# run\n\n# more\nq1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\n",
         "line 5: expected 6 fields (qid Q0 docno rank score tag), got 5."),
        ("q1 Q0 d1 1 0.5 t\n\nq1 Q0 d2 2 abc t\n", "line 3: score 'abc' is not a finite number."),
        ("# c\nq1 Q0 d1 1 nan t\n", "line 2: score 'nan' is not a finite number."),
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 inf t\n", "line 2: score 'inf' is not a finite number."),
        ("q1 Q0 d1 1 -inf t\n", "line 1: score '-inf' is not a finite number."),
        ("q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\n# c\nq1 Q0 d1 3 0.1 t\n",
         "document 'd1' appears twice for query 'q1' (lines 1 and 4); each run lists a "
         "document once per query."),
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n",
         "document 'd1' appears twice for query 'q1' (lines 1 and 2); each run lists a "
         "document once per query."),
        ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 null t\n", "line 2: score 'null' is not a finite number."),
        ("q1 Q0 d1 1 0.5 \n", "line 1: expected 6 fields (qid Q0 docno rank score tag), got 5."),
        (" q1 Q0 d1 1 0.5\n", "line 1: expected 6 fields (qid Q0 docno rank score tag), got 5."),
        ("q1 Q0 d1 1 0.5 t\rq1 Q0 d2 2 0.4 t\n",
         "line 1: a carriage return inside the line (old Mac line ends?)"),
        ("", "the run has no lines."),
        ("# nothing but comments\n\n  \n", "the run has no lines."),
    ],
)
def test_read_run_errors(tmp_path, text, message, parser):
    _raises(read_run, tmp_path, text, message, "system.run", parser)


PLAIN_RUN = "q1 Q0 d1 1 2.5 tag\nq1 Q0 \"d2\" 2 1e-3 tag\nq2 Q0 文档 1 -7 last-tag\n"
NOT_PLAIN = {  # each of these must give the same rows as the plain text, through NumPy
    "tabs": PLAIN_RUN.replace(" ", "\t"),
    "two spaces": PLAIN_RUN.replace(" ", "  "),
    "CRLF": PLAIN_RUN.replace("\n", "\r\n"),
    "blank line": PLAIN_RUN.replace("\n", "\n\n", 1),
    "comment": "# a b c d e\n" + PLAIN_RUN,
    "comment inside": PLAIN_RUN.replace("\n", "\n#a b c 1 2.5 f\n", 1),
    "comment at the end": PLAIN_RUN + "#a b c 1 2.5 f\n",
    "comment first": "#a b c 1 2.5 f\n" + PLAIN_RUN,
    "leading space": " " + PLAIN_RUN,
    "trailing space": PLAIN_RUN.replace("\n", " \n"),
    "no final newline": PLAIN_RUN[:-1],
    "form feed": PLAIN_RUN.replace(" 2.5", "\f2.5"),
}


def test_pyarrow_reads_only_plain_text(monkeypatch):
    """pyarrow parses text with single spaces and newlines only; every other
    layout goes to the NumPy reader, and both give the same rows."""
    def parsed_by_arrow(text, engine="auto"):
        buf = np.frombuffer(text.encode(), dtype=np.uint8)
        fields = (_arrow.ArrowFields.parse(buf, "x", 6, (0, 2), 4)
                  if _io._use_arrow(engine) else None)
        return fields is not None and fields.plain()

    expected = {("q1", "d1", 2.5), ("q1", '"d2"', 1e-3), ("q2", "文档", -7.0)}
    assert parsed_by_arrow(PLAIN_RUN)
    run = read_run(io.StringIO(PLAIN_RUN))
    assert _rows(run) == expected and run.name == "last-tag"
    for layout, text in NOT_PLAIN.items():
        assert not parsed_by_arrow(text), layout
        run = read_run(io.StringIO(text))
        assert _rows(run) == expected and run.name == "last-tag", layout
    assert not parsed_by_arrow(PLAIN_RUN, engine="numpy")
    def never(*args):
        raise AssertionError("engine='numpy' asked pyarrow")

    monkeypatch.setattr(_arrow.ArrowFields, "parse", never)
    assert _rows(read_run(io.StringIO(PLAIN_RUN), engine="numpy")) == expected


def test_engine_chooses_the_reader(monkeypatch):
    """engine="pyarrow" parses a plain file with pyarrow only, and a file
    pyarrow does not take (not plain) with NumPy, to the same rows; "numpy"
    never asks pyarrow (see above); an unknown engine is an error."""
    pytest.importorskip("pyarrow")
    expected = {("q1", "d1", 2.5), ("q1", '"d2"', 1e-3), ("q2", "文档", -7.0)}
    numpy_reader = _io.Fields

    def never(*args, **kwargs):
        raise AssertionError("the NumPy reader was asked")

    monkeypatch.setattr(_io, "Fields", never)
    assert _rows(read_run(io.StringIO(PLAIN_RUN), engine="pyarrow")) == expected
    monkeypatch.setattr(_io, "Fields", numpy_reader)
    for text in NOT_PLAIN.values():
        assert _rows(read_run(io.StringIO(text), engine="pyarrow")) == expected
    with pytest.raises(ValueError, match="'engine' parameter of read_qrels must be a str among"):
        read_qrels(io.StringIO(QRELS_TEXT), engine="arrow")


def test_engine_pyarrow_without_pyarrow(monkeypatch):
    """Without pyarrow, engine="pyarrow" is an ImportError naming the extra
    that installs it; "auto" reads with NumPy."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow: ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.csv", None)
    with pytest.raises(ImportError, match=re.escape('pip install "sklearn-rank[fast]"')):
        read_run(io.StringIO(PLAIN_RUN), engine="pyarrow")
    for engine in ("auto", "numpy"):
        assert _rows(read_qrels(io.StringIO(QRELS_TEXT), engine=engine)) == QRELS_ROWS


@pytest.mark.parametrize("layout", ["plain", "comment"])
def test_readers_agree(tmp_path, layout):
    """The pyarrow and NumPy readers build identical tables from generated files."""
    qrels, run = _collection(**CONFIGS["graded"], aligned=False)
    rng = np.random.default_rng(3)
    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    _write_qrels(qrels_path, qrels, rng, comment=layout == "comment")
    run_path.write_text(("# a comment\n" if layout == "comment" else "") + "".join(
        f"{q} Q0 {d} 1 {s!r} t\n" for q, docs in run.items() for d, s in docs.items()),
        encoding="utf-8")
    tables = []
    for engine in ("auto", "numpy"):
        tables.append((read_qrels(qrels_path, engine=engine), read_run(run_path, engine=engine)))
    for a, b in zip(*tables, strict=True):
        for column in ("_qid", "_docno"):
            assert getattr(a, column).items() == getattr(b, column).items()
        assert (a._key == b._key).all()
        assert (a.qid == b.qid).all() and (a.docno == b.docno).all()
    assert (tables[0][0].rel == tables[1][0].rel).all()
    assert (tables[0][1].score == tables[1][1].score).all()
    for qrels_table, run_table in tables:  # writable arrays, as any NumPy array
        for array in (qrels_table.rel, run_table.score, run_table.docno):
            assert array.flags.writeable


def test_column_strings_anywhere_in_the_buffer():
    """Strings of any length, up to the last byte of the buffer, rows in any order."""
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list("ab文c"), size=n)) for n in rng.integers(1, 30, 200)]
    words += ["x", "a" * 8, "b" * 16, "end"]  # the last one ends the buffer
    data = " ".join(words).encode()
    lengths = np.array([len(w.encode()) for w in words])
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    column = IdColumn(np.frombuffer(data, dtype=np.uint8), starts, lengths)
    expected = np.array([w.encode() for w in words])
    assert (column.fixed() == expected).all()
    rows = rng.permutation(len(words))[:50]
    assert (column.fixed(rows) == expected[rows]).all()
    wide = expected.astype(f"S{8 * (expected.dtype.itemsize // 8 + 2)}")  # NUL-padded words
    assert (column.hash() == hash_words(wide.view(np.uint64).reshape(len(words), -1).T)).all()
    # NUL padding does not change a hash: any width, same hash
    assert (hash64(expected) == hash64(expected.astype("S64"))).all()
    assert np.unique(hash64(expected)).shape[0] == np.unique(expected).shape[0]


def test_hash64_of_bytes_and_str_arrays():
    """hash64 (shared by the TREC tables and the grouping of string query
    ids): of 'S' and 'U' arrays, equal strings hash equal whatever the width,
    distinct ones differ (here); other dtypes are refused."""
    rng = np.random.default_rng(1)
    words = ["".join(rng.choice(list("ab文c\x01"), size=n)) for n in rng.integers(0, 20, 400)]
    for strings in (np.array(words), np.array([w.encode() for w in words])):
        hashes = hash64(strings)
        assert (hashes == hash64(strings.astype(f"{strings.dtype.kind}48"))).all()
        same_string = strings[:, None] == strings[None, :]
        assert ((hashes[:, None] == hashes[None, :]) == same_string).all()
    assert hash64(np.array([], dtype="U")).shape == (0,)
    with pytest.raises(TypeError, match="takes a 'S' or 'U' array"):
        hash64(np.arange(3))


@pytest.mark.parametrize("width", [1, 3, 7, 8, 9, 16, 21])
@pytest.mark.parametrize("padded", [True, False])
def test_packed_column_of_equal_length_strings(width, padded):
    """Equal-length strings back to back (pyarrow's layout) are read through
    strided views: the same strings and hashes as the gathered reading, with
    or without zero bytes after the last string."""
    rng = np.random.default_rng(width)
    n = 37
    strings = rng.integers(33, 127, (n, width), dtype=np.uint8)
    data = np.concatenate((strings.ravel(), np.zeros(8 if padded else 0, dtype=np.uint8)))
    start, length = np.arange(n) * width, np.full(n, width)
    packed = IdColumn(data, start, length, packed=True)
    gathered = IdColumn(data, start, length)
    assert packed._stride == width and not gathered._stride
    expected = strings.view(f"S{width}").ravel()
    assert (packed.fixed() == expected).all() and packed.fixed().flags.writeable
    rows = rng.permutation(n)[:10]
    assert (packed.fixed(rows) == expected[rows]).all()
    assert (packed.hash() == gathered.hash()).all()
    assert (packed.hash() == hash_words(_words(expected).T)).all()
    # hashing works on copies: the strings are left as they were
    assert (packed.fixed() == expected).all() and (gathered.fixed() == expected).all()
    # unequal lengths: gathered, whatever the layout
    uneven = IdColumn(data, start[:-1], np.diff(start) - (np.arange(n - 1) % 2), packed=True)
    assert not uneven._stride
    assert (uneven.fixed() == np.array([s[:k] for s, k in
                                        zip(expected[:-1], uneven.length, strict=True)])).all()


def test_arrow_strings_join_chunks():
    """A chunked pyarrow binary column (sliced and empty chunks included)
    becomes one buffer with its offsets, followed by 8 zero bytes."""
    pa = pytest.importorskip("pyarrow")
    chunks = [pa.array([b"ab", b"c"], pa.binary()), pa.array([], pa.binary()),
              pa.array([b"xx", b"defg", b"h", b"yy"], pa.binary()).slice(1, 2)]
    data, offsets = _arrow._arrow_strings(pa.chunked_array(chunks, pa.binary()))
    assert data.tobytes() == b"abcdefgh" + bytes(8)
    assert offsets.tolist() == [0, 2, 3, 7, 8]


@pytest.mark.parametrize("keys", ["equal", "same slot"])
def test_hash_join_survives_colliding_keys(keys):
    """Pair keys that collide (all equal) or crowd one slot per query give the
    same evaluation: probing finds the keys, and failed id checks redo the join
    exactly."""
    qrels, run = _collection(**CONFIGS["graded"])
    reference = evaluate_run(qrels, run, MEASURES)
    qrels_table, run_table = Qrels.from_dict(qrels), Run.from_dict(run)
    for table in (qrels_table, run_table):
        key = table._key
        table._key = np.zeros_like(key) if keys == "equal" else key << np.uint64(24)
    assert evaluate_run(qrels_table, run_table, MEASURES) == reference


def _sort_merge(qrels, run):
    """The join by sorting: for each run row, the qrels row with its (qid,
    docno), or len(qrels); the reference of the hash join."""
    def rows(table):
        pairs = zip(table.qid_bytes.items(), table.docno_bytes.items(), strict=True)
        return sorted((pair, row) for row, pair in enumerate(pairs))

    left, right = rows(qrels), rows(run)  # ((qid, docno), row), sorted
    match, i = [len(qrels)] * len(run), 0
    for pair, row in right:
        while i < len(left) and left[i][0] < pair:
            i += 1
        if i < len(left) and left[i][0] == pair:
            match[row] = left[i][1]
    return match


def _hash_join(qrels, run):
    vocabulary, (q_runs, r_runs) = _join.query_codes(qrels, run)
    return _join.match_rows(qrels, run, np.repeat(q_runs, qrels.query_runs[1]),
                            np.repeat(r_runs, run.query_runs[1]), vocabulary.shape[0])


def _colliding_docnos(rng, n):
    """n pairs of distinct 16-byte ids with equal hash_words (so equal pair
    keys within a query): word 1 of the second solves the hash's equation."""
    m0, m1 = (int(m) for m in _hashing._multipliers(0, 2))
    inverse, mask = pow(m1, -1, 2**64), 2**64 - 1
    allowed = [b for b in range(33, 256) if b != 35]  # no NUL, whitespace or "#"
    pairs = []
    while len(pairs) < n:
        x0, x1, y0 = (int.from_bytes(bytes(rng.choice(allowed, 8).tolist()), sys.byteorder)
                      for _ in range(3))
        y1 = (((x0 * m0) ^ (x1 * m1) ^ (y0 * m0)) & mask) * inverse & mask
        word = y1.to_bytes(8, sys.byteorder)
        if all(b in allowed for b in word):
            pairs.append(tuple(a.to_bytes(8, sys.byteorder) + b.to_bytes(8, sys.byteorder)
                               for a, b in ((x0, x1), (y0, y1))))
    return pairs


def _join_tables(seed):
    """Qrels and a run over few queries (rows interleaved), sharing about half
    their pairs, with colliding docnos on either side, a very long docno
    and a very long qid (columns that are not compact)."""
    rng = np.random.default_rng(seed)
    qids = [b"q%d" % i for i in range(6)]
    docnos = [b"d%d" % i for i in range(300)]
    long_qid, long_docno = b"q" * (1 << 20), b"d" * (1 << 20)
    sides = []
    for _ in range(2):
        pairs = {(qids[q], docnos[d]) for q, d in
                 zip(rng.integers(0, len(qids), 1500), rng.integers(0, len(docnos), 1500),
                     strict=True)}
        sides.append(sorted(pairs) + [(long_qid, b"d1"), (b"q1", long_docno)])
    for qid, (x, y) in zip(rng.choice(qids, 40), _colliding_docnos(rng, 40), strict=True):
        sides[0].append((qid, x))  # judged: x; retrieved: y (same key), and x for some
        sides[1].extend([(qid, y)] + [(qid, x)] * int(rng.integers(0, 2)))
    tables = []
    for cls, side in zip((Qrels, Run), sides, strict=True):
        side = [side[i] for i in rng.permutation(len(side))]
        tables.append(cls([q for q, _ in side], [d for _, d in side],
                          rng.integers(0, 3, len(side))))
    return tables


@pytest.mark.parametrize("keys", ["real", "top bits only", "all equal"])
@pytest.mark.parametrize("seed", [0, 1])
def test_hash_join_equals_a_sort_merge(seed, keys):
    """The per-query hash join with its id verification gives the rows a
    sort-merge join gives, with crafted ids whose keys collide and with keys
    forced to collide (few distinct values, or one)."""
    qrels, run = _join_tables(seed)
    assert not qrels.docno_bytes.compact and not run.qid_bytes.compact
    assert np.unique(run.keys).shape[0] < len(run)  # the crafted pairs collide
    if keys != "real":
        for table in (qrels, run):
            table._key = (table.keys & np.uint64(0xC000000000000000) if keys == "top bits only"
                          else np.zeros_like(table.keys))
    reference = _sort_merge(qrels, run)
    assert 0 < sum(row < len(qrels) for row in reference) < len(run)
    assert _hash_join(qrels, run).tolist() == reference


@pytest.mark.parametrize("threads", ["1", "3"])
def test_hash_join_in_parts_on_threads_equals_a_sort_merge(monkeypatch, threads):
    """The run's rows looked up in parts (a few rows each here), on one
    thread or three: the sort-merge join's rows."""
    qrels, run = _join_tables(2)
    reference = _sort_merge(qrels, run)
    monkeypatch.setenv("SKLEARN_RANK_NUM_THREADS", threads)
    monkeypatch.setattr(_join, "_FIND_ROWS", 7)
    for _ in range(5):
        assert _hash_join(qrels, run).tolist() == reference


def test_error_names_a_buffer():
    with pytest.raises(ValueError, match=re.escape("<buffer>: line 1: expected 6 fields")):
        read_run(io.StringIO("q1 Q0 d1 1 0.5\n"))


def test_same_document_in_two_queries_is_fine():
    qrels = read_qrels(io.StringIO("q1 0 d1 1\nq2 0 d1 0\n"))
    assert _rows(qrels) == {("q1", "d1", 1.0), ("q2", "d1", 0.0)}


@pytest.mark.parametrize("text", ["", "# only a comment\n\n"])
def test_read_qrels_without_judgments(tmp_path, text):
    path = _write(tmp_path / "empty.qrels", text)
    try:
        qrels = read_qrels(path)
    except ValueError as error:
        assert str(path) in str(error)
    else:
        assert len(qrels) == 0


# =========================================================================== parity

_PREFIXES = ("d", "D", "doc-", "é", "文档")
WIDE_QID = "zz_longest_query_id_of_all"
WIDE_DOCNO = "zz-longest-document-id-文档"


def _collection(seed, n_queries, *, graded=True, negative=True, unjudged=True, spread=8,
                aligned=True, depth=(3, 25)):
    """Generated ``(qrels, run)`` dicts in pytrec_eval's layout.

    Scores are integers / 64 (exact in float32) drawn from ``spread`` values,
    so small spreads give many ties, broken by docno; docnos mix prefixes and
    numbers ("d9" > "d10") and non-ASCII ids. Besides random queries there are
    queries only in the run, only in the qrels (with and without relevant or
    judged documents), without relevant documents, and retrieving only
    unjudged documents.

    ``aligned`` adds a query to both sides whose id and document id are the
    longest of the collection (in UTF-8 bytes), so the qrels and the run hold
    ids of the same widths; ``aligned=False`` keeps the natural widths, which
    differ (a regression once: ids were hashed with their padding).
    ``depth``: the range of the number of documents of a query.
    """
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    qids = [f"q{i}" for i in range(n_queries - 2)] + ["007", "7"]
    for qid in qids:
        n = int(rng.integers(*depth))
        numbers = rng.choice(max(300, 2 * n), size=n, replace=False)
        docs = [f"{_PREFIXES[int(rng.integers(len(_PREFIXES)))]}{j}" for j in numbers]
        if graded:
            levels = rng.choice(4, size=n, p=[0.5, 0.2, 0.18, 0.12])
        else:
            levels = rng.choice(2, size=n, p=[0.65, 0.35])
        judged = rng.random(n) < (0.75 if unjudged else 1.0)
        if negative:
            levels = np.where(rng.random(n) < 0.12, -1, levels)
        retrieved = rng.random(n) < 0.8
        if not unjudged:
            retrieved &= judged
        retrieved[int(np.argmax(judged))] = True  # a judged document, if any, retrieved
        scores = rng.integers(-spread // 2, spread // 2 + 1, size=n) / 64
        if judged.any():
            qrels[qid] = {d: int(v) for d, v, j in zip(docs, levels, judged, strict=True) if j}
        run[qid] = {d: float(s) for d, s, r in zip(docs, scores, retrieved, strict=True) if r}
    run["run_only_a"] = {"d1": 1.0, "d2": 0.5}
    run["run_only_b"] = {"x": 0.0}
    qrels["qrels_only_rel"] = {"d1": 1, "d2": 0, "d3": 2 if graded else 1}
    qrels["qrels_only_nonrel"] = {"d1": 0}
    qrels["no_rel"] = {"d1": 0, "d2": 0, "d3": 0}
    run["no_rel"] = {"d1": 0.5, "d2": 0.5, "d4": 0.25}
    qrels["unjudged_ret"] = {"d1": 1, "d2": 0}
    run["unjudged_ret"] = {"x1": 0.5, "x2": 0.5, "x3": 0.0}
    if negative:
        qrels["qrels_only_neg"] = {"d1": -1}
        qrels["neg_only"] = {"d1": -1, "d2": -1}
        run["neg_only"] = {"d1": 0.5, "d2": 0.75, "d3": 0.75}
    if aligned:
        qrels[WIDE_QID] = {WIDE_DOCNO: 1, "d1": 0}
        run[WIDE_QID] = {WIDE_DOCNO: 0.5, "d1": 0.5}
    return qrels, run


CONFIGS = {
    "graded": dict(seed=0, n_queries=40, spread=8),
    "binary": dict(seed=1, n_queries=30, graded=False, spread=6),
    "few_ties": dict(seed=2, n_queries=25, spread=4096),
    "all_judged": dict(seed=3, n_queries=30, negative=False, unjudged=False, spread=10),
    "heavy_ties": dict(seed=4, n_queries=60, spread=2),
    "deep": dict(seed=5, n_queries=24, spread=4096, depth=(50, 400)),
}
OPTIONS = [
    dict(relevance_level=1, judged_only=False),
    dict(relevance_level=2, judged_only=False),
    dict(relevance_level=1, judged_only=True),
    dict(relevance_level=2, judged_only=True),
    dict(relevance_level=3, judged_only=False),
]
OPTION_IDS = ["l1", "l2", "l1-J", "l2-J", "l3"]


def _pytrec(qrels, run, relevance_level=1, judged_only=False, measures=MEASURES):
    pytrec_eval = _pytrec_eval()
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(measures), relevance_level=relevance_level,
        judged_docs_only_flag=judged_only)
    return evaluator.evaluate(run)


def _assert_matches_trec_eval(ev, expected):
    """Per query (aligned by qid) and means, every measure pytrec_eval returned."""
    pytrec_eval = _pytrec_eval()
    qids = sorted(expected)
    assert ev.qids.tolist() == qids
    for key in sorted(expected[qids[0]]):
        theirs = np.array([expected[q][key] for q in qids])
        ours = ev.per_query[key]
        mean = pytrec_eval.compute_aggregated_measure(key, theirs.tolist())
        if key == "gm_map":  # trec_eval's per-query value is log(max(AP, 1e-5))
            np.testing.assert_allclose(np.maximum(ours, 1e-5), np.exp(theirs), rtol=1e-9,
                                       err_msg=key)
            assert ev.mean[key] == pytest.approx(mean, rel=1e-9), key
        else:
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=ATOL, err_msg=key)
            assert ev.mean[key] == pytest.approx(mean, abs=ATOL), key


def _has_decisive_ties(qrels, run) -> bool:
    """Some query has tied documents of different relevance."""
    for qid, docs in run.items():
        by_score = {}
        for d, s in docs.items():
            by_score.setdefault(s, set()).add(qrels.get(qid, {}).get(d, 0) >= 1)
        if any(len(flags) > 1 for flags in by_score.values()):
            return True
    return False


PARITY_CASES = [  # binary labels have no level >= 2
    pytest.param(config, options, id=f"{config}-{option_id}")
    for config in CONFIGS
    for options, option_id in zip(OPTIONS, OPTION_IDS, strict=True)
    if not (config == "binary" and options["relevance_level"] > 1)
]


@pytest.mark.parametrize("config, options", PARITY_CASES)
def test_parity_with_trec_eval(config, options):
    qrels, run = _collection(**CONFIGS[config])
    expected = _pytrec(qrels, run, **options)
    # queries only in the run, or only in the qrels, are skipped
    assert set(expected) == set(qrels) & set(run)
    ev = evaluate_run(qrels, run, MEASURES, convention="trec_eval", **options)
    _assert_matches_trec_eval(ev, expected)
    assert ev.n_queries == len(expected)
    num_rel = _pytrec(qrels, run, measures=["num_rel"], **options)
    assert ev.n_empty["map"] == sum(v["num_rel"] == 0 for v in num_rel.values())


def test_generated_collections_exercise_the_rules():
    """The generated data has what the parity tests claim to cover."""
    for config in CONFIGS.values():
        qrels, run = _collection(**config)
        assert 20 <= len(set(qrels) & set(run)) <= 64
        assert set(run) - set(qrels) and set(qrels) - set(run)
        pairs = [(q, d) for q in run for d in run[q]]
        assert any(d not in qrels.get(q, {}) for q, d in pairs) or not config.get(
            "unjudged", True)
        missed = [(q, d) for q in qrels for d, v in qrels[q].items()
                  if v >= 1 and d not in run.get(q, {})]
        assert missed
        if config.get("spread", 8) < 100:
            assert _has_decisive_ties(qrels, run)
        if config.get("negative", True):
            assert any(v < 0 for docs in qrels.values() for v in docs.values())
    # long rankings: relevant and judged non-relevant documents deep down
    qrels, run = _collection(**CONFIGS["deep"])
    deep = [(docs[d], rank) for q in set(qrels) & set(run)
            for rank, d in enumerate(sorted(run[q], key=run[q].get, reverse=True), 1)
            if d in (docs := qrels[q])]
    assert any(level >= 2 and rank > 200 for level, rank in deep)
    assert any(level == 0 and rank > 200 for level, rank in deep)


@pytest.mark.parametrize("config, options", [
    case for case in PARITY_CASES
    if case.values[0] in ("graded", "binary", "all_judged") and case.values[1] in OPTIONS[:3]])
def test_complete_matches_trec_eval_c(config, options):
    """complete=True is trec_eval -c: a judged query missing from the run scores
    0 in every measure (log(1e-5) for gm_map), and means are over all judged
    queries."""
    qrels, run = _collection(**CONFIGS[config])
    missing = sorted(set(qrels) - set(run))
    assert len(missing) >= 2
    # trec_eval -c evaluates a missing query on a one-document bogus ranking
    c_run = {**run, **{q: {BOGUS_DOCNO: 1.0} for q in missing}}
    expected = _pytrec(qrels, c_run, **options)
    assert set(expected) == set(qrels)
    for q in missing:
        for key, value in expected[q].items():
            assert value == (math.log(1e-5) if key == "gm_map" else 0.0), (q, key)
    ev = evaluate_run(qrels, run, MEASURES, complete=True, convention="trec_eval",
                      **options)
    _assert_matches_trec_eval(ev, expected)
    # the means are over every judged query, with the missing ones at 0
    plain = evaluate_run(qrels, run, MEASURES, convention="trec_eval", **options)
    n, m = len(qrels), len(set(qrels) & set(run))
    assert ev.mean["map"] == pytest.approx(plain.mean["map"] * m / n, abs=ATOL)
    gm = math.exp((m * math.log(plain.mean["gm_map"]) + (n - m) * math.log(1e-5)) / n)
    assert ev.mean["gm_map"] == pytest.approx(gm, rel=1e-9)


def test_ties_are_broken_by_docno_descending():
    """trec_eval orders tied documents by decreasing docno (strcmp): renaming
    documents changes the result."""
    cases = [  # (relevant doc, non-relevant doc, expected reciprocal rank)
        ("a", "b", 0.5),   # "b" > "a": the non-relevant document first
        ("c", "b", 1.0),   # the same ranking with the relevant document renamed
        ("d10", "d9", 0.5),  # bytes, not numbers: "d9" > "d10"
        ("D9", "d9", 0.5),   # ASCII: "d9" > "D9"
        ("é", "z", 1.0),   # UTF-8 bytes: "é" (0xC3 0xA9) > "z"
    ]
    qrels = {f"t{i}": {rel: 1, non: 0, "zz-low": 0} for i, (rel, non, _) in enumerate(cases)}
    run = {f"t{i}": {rel: 0.5, non: 0.5, "zz-low": 0.25}
           for i, (rel, non, _) in enumerate(cases)}
    expected = np.array([rr for *_, rr in cases])
    ev = evaluate_run(qrels, run, ["recip_rank", "map", "P.1"], convention="trec_eval")
    np.testing.assert_array_equal(ev.per_query["recip_rank"], expected)
    np.testing.assert_array_equal(ev.per_query["P_1"], expected == 1.0)
    _assert_matches_trec_eval(ev, _pytrec(qrels, run, measures=["recip_rank", "map", "P.1"]))
    # the registry's names average over the orders of tied documents, whatever their ids
    registry = evaluate_run(qrels, run, ["mrr", "map", "p@1"])
    np.testing.assert_allclose(registry.per_query["mrr"], 0.75, rtol=1e-15)
    np.testing.assert_allclose(registry.per_query["p@1"], 0.5, rtol=1e-15)


def test_design_measured_values():
    """DESIGN.md §7: NDCG@6 of labels [3, 2, 3, 0, 1, 2] ranked in that order is
    0.960808 in trec_eval; y_true [1, 0, 0, 0] with scores [1, 1, 1, 0] gives
    0.5 or 1.0 depending on the document names."""
    labels = [3, 2, 3, 0, 1, 2]
    qrels = {"q": {f"d{i}": v for i, v in enumerate(labels)}}
    run = {"q": {f"d{i}": 6.0 - i for i in range(6)}}
    ev = evaluate_run(qrels, run, ["ndcg_cut.6", "ndcg"], convention="trec_eval")
    assert ev.mean["ndcg_cut.6"] == pytest.approx(0.960808, abs=1e-6)
    _assert_matches_trec_eval(ev, _pytrec(qrels, run, measures=["ndcg_cut.6", "ndcg"]))
    for relevant, expected in (("d1", 0.5), ("d3", 1.0)):
        qrels = {"q": {"d1": 0, "d2": 0, "d3": 0, "d4": 0, relevant: 1}}
        run = {"q": {"d1": 1.0, "d2": 1.0, "d3": 1.0, "d4": 0.0}}
        ev = evaluate_run(qrels, run, ["ndcg"], convention="trec_eval")
        assert ev.per_query["ndcg"][0] == pytest.approx(expected)
        _assert_matches_trec_eval(ev, _pytrec(qrels, run, measures=["ndcg"]))


def test_renaming_documents_changes_tied_rankings_like_trec_eval():
    qrels, run = _collection(**CONFIGS["heavy_ties"])
    docs = sorted({d for q in run.values() for d in q} | {d for q in qrels.values() for d in q},
                  key=str.encode)
    # reverses the docno order of every pair of documents, hence every tie order
    rename = {d: f"r{len(docs) - i:04d}" for i, d in enumerate(docs)}
    qrels2 = {q: {rename[d]: v for d, v in j.items()} for q, j in qrels.items()}
    run2 = {q: {rename[d]: s for d, s in r.items()} for q, r in run.items()}
    before = evaluate_run(qrels, run, MEASURES, convention="trec_eval")
    after = evaluate_run(qrels2, run2, MEASURES, convention="trec_eval")
    _assert_matches_trec_eval(after, _pytrec(qrels2, run2))
    changed = [k for k in ("recip_rank", "map", "P_5", "ndcg")
               if not np.allclose(before.per_query[k], after.per_query[k])]
    assert changed == ["recip_rank", "map", "P_5", "ndcg"]


def _write_qrels(path, qrels, rng, comment=True):
    lines = [f"{q} 0 {d} {v}\n" for q, docs in qrels.items() for d, v in docs.items()]
    rng.shuffle(lines)
    path.write_text(("# qrels\n" if comment else "") + "".join(lines), encoding="utf-8")


def _write_run(path, run, rng, tag="tag1"):
    # queries interleaved, lines out of score order, a meaningless rank column
    lines = [f"{q}\tQ0\t{d}\t{int(rng.integers(1, 9))}\t{s!r}\t{tag}\n"
             for q, docs in run.items() for d, s in docs.items()]
    rng.shuffle(lines)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("".join(lines))


def test_files_and_dicts_give_identical_results(tmp_path, parser):
    qrels, run = _collection(**CONFIGS["graded"])
    rng = np.random.default_rng(7)
    qrels_path, run_path = tmp_path / "test.qrels", tmp_path / "system.run.gz"
    _write_qrels(qrels_path, qrels, rng)
    _write_run(run_path, run, rng)
    assert read_run(run_path, engine=parser).name == "tag1"
    reference = evaluate_run(qrels, run, MEASURES, convention="trec_eval")
    with open(qrels_path, "rb") as qf, open(run_path, "rb") as rf:
        from_buffers = evaluate_run(qf, rf, MEASURES, convention="trec_eval")
    for ev in (evaluate_run(qrels_path, run_path, MEASURES, convention="trec_eval"),
               evaluate_run(str(qrels_path), str(run_path), MEASURES,
                            convention="trec_eval"),
               evaluate_run(read_qrels(qrels_path, engine=parser),
                            read_run(run_path, engine=parser), MEASURES,
                            convention="trec_eval"),
               evaluate_run(Qrels.from_dict(qrels), Run.from_dict(run), MEASURES,
                            convention="trec_eval"),
               from_buffers):
        assert ev == reference
        assert dict(ev.mean) == dict(reference.mean)
    _assert_matches_trec_eval(reference, _pytrec(qrels, run))


def test_ids_of_different_widths(tmp_path, parser):
    """trec_eval matches ids as strings, whatever the other ids' lengths."""
    qrels = {"q1": {"a": 1, "longdocname": 0}, "a-longer-query-id": {"b": 1}}
    run = {"q1": {"a": 1.0, "c": 0.5}}
    expected = _pytrec(qrels, run, measures=["map", "P.1", "ndcg"])
    assert expected == {"q1": {"map": 1.0, "P_1": 1.0, "ndcg": 1.0}}
    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels_path.write_text("q1 0 a 1\nq1 0 longdocname 0\n")
    run_path.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 c 2 0.5 t\n")
    for ev in (evaluate_run(qrels, run, ["map", "P.1", "ndcg"]),
               evaluate_run(read_qrels(qrels_path, engine=parser),
                            read_run(run_path, engine=parser), ["map", "P.1", "ndcg"])):
        _assert_matches_trec_eval(ev, expected)


@pytest.mark.parametrize("config", ["graded", "binary"])
def test_parity_with_trec_eval_natural_widths(config):
    qrels, run = _collection(**CONFIGS[config], aligned=False)
    _assert_matches_trec_eval(evaluate_run(qrels, run, MEASURES, convention="trec_eval"),
                              _pytrec(qrels, run))


@pytest.mark.parametrize("case", ["complete", "judged_only"])
def test_nothing_left_to_rank(case):
    """trec_eval -c scores judged queries absent from the run 0; -J can leave a
    query without documents, which then scores 0 (pytrec_eval agrees)."""
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
    if case == "complete":
        run = {"q9": {"a": 1.0}}
        expected = _pytrec(qrels, {q: {BOGUS_DOCNO: 1.0} for q in qrels})
        ev = evaluate_run(qrels, run, MEASURES, complete=True, convention="trec_eval")
    else:
        run = {"q1": {"x": 1.0}, "q2": {"y": 0.5, "z": 0.5}}
        expected = _pytrec(qrels, run, judged_only=True)
        ev = evaluate_run(qrels, run, MEASURES, judged_only=True, convention="trec_eval")
    assert all(v == (math.log(1e-5) if k == "gm_map" else 0.0)
               for scores in expected.values() for k, v in scores.items())
    _assert_matches_trec_eval(ev, expected)


def test_no_query_in_common():
    """trec_eval stops with "No queries with both results and relevance info"."""
    with pytest.raises(ValueError):
        evaluate_run({"q1": {"a": 1}}, {"q2": {"a": 1.0}}, ["map"])


def test_non_ascii_query_ids():
    qrels = {"テーマ": {"é": 1, "z": 0}, "q": {"a": 1}}
    run = {"テーマ": {"é": 1.0, "z": 1.0}, "q": {"b": 1.0, "a": 0.5}}
    ev = evaluate_run(qrels, run, ["recip_rank", "map"], convention="trec_eval")
    assert ev.qids.tolist() == ["q", "テーマ"]
    _assert_matches_trec_eval(ev, _pytrec(qrels, run, measures=["recip_rank", "map"]))


# ================================================================ extra metrics


def _trec_ranking(run_q: dict) -> list:
    """trec_eval's order: decreasing score, ties by decreasing docno (bytes)."""
    return sorted(run_q, key=lambda d: (run_q[d], d.encode()), reverse=True)


def _level(qrels_q: dict, doc) -> float:
    """The document's level, 0 when unjudged (not in the qrels, or negative)."""
    return max(qrels_q.get(doc, 0), 0)


def _ndcg_ref(qrels_q, run_q, k, gain, discount):
    def g(level):
        return 2.0**level - 1 if gain == "exponential" else float(level)

    def d(r):  # r = 1, 2, ...
        return 1 / math.log2(r + 1) if discount == "log2" else 1 / max(1.0, math.log2(r))

    ranked = [_level(qrels_q, doc) for doc in _trec_ranking(run_q)][:k]
    ideal = sorted((v for v in qrels_q.values() if v >= 0), reverse=True)[:k]
    dcg = sum(g(v) * d(r) for r, v in enumerate(ranked, 1))
    idcg = sum(g(v) * d(r) for r, v in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


def _err_ref(qrels_q, run_q, k, max_grade=4):
    value, go_on = 0.0, 1.0
    for r, doc in enumerate(_trec_ranking(run_q)[:k], 1):
        stop = (2.0**_level(qrels_q, doc) - 1) / 2.0**max_grade
        value += go_on * stop / r
        go_on *= 1 - stop
    return value


def _rank_eff_ref(qrels_q, run_q, threshold=1):
    """RankEff (Ahlgren & Grönqvist 2008): (1/R) sum over the retrieved relevant
    documents of 1 - (judged non-relevant documents above) / N; unjudged
    documents are skipped; R and N count every judged document of the query."""
    n_rel = sum(v >= threshold for v in qrels_q.values())
    n_nonrel = sum(0 <= v < threshold for v in qrels_q.values())
    total, above = 0.0, 0
    for doc in _trec_ranking(run_q):
        level = qrels_q.get(doc, -1)
        if level >= threshold:
            total += 1 - above / n_nonrel
        elif level >= 0:
            above += 1
    return total / n_rel


EXTRA = ["ndcg(gain='exponential')@3", "err@3", "rank_eff", "ndcg(discount='classic')@3"]


def test_extra_metrics_follow_trec_rules():
    qrels = {
        # d4 (level 2) is judged but not retrieved: it counts in the ideal DCG.
        # d5 is in the pool but unjudged (-1), d6 and d7 are not in the qrels.
        "q1": {"d1": 3, "d2": 0, "d3": 1, "d4": 2, "d5": -1, "d8": 0},
        # every relevant document retrieved; g judged non-relevant, not retrieved
        "q2": {"a": 2, "b": 1, "c": 0, "e": 0, "f": 1, "g": 0},
    }
    run = {
        "q1": {"d7": 3.0, "d1": 2.0, "d2": 1.0, "d3": 1.0, "d6": 1.0, "d5": 0.5},
        "q2": {"b": 0.75, "c": 0.75, "x": 0.75, "e": 0.5, "f": 0.5, "a": 0.25},
    }
    # trec_eval order: q1 d7 d1 d6 d3 d2 d5; q2 x c b f e a
    assert _trec_ranking(run["q1"]) == ["d7", "d1", "d6", "d3", "d2", "d5"]
    assert _trec_ranking(run["q2"]) == ["x", "c", "b", "f", "e", "a"]
    ev = evaluate_run(qrels, run, EXTRA, convention="trec_eval")
    assert ev.qids.tolist() == ["q1", "q2"]
    expected = {
        EXTRA[0]: [_ndcg_ref(qrels[q], run[q], 3, "exponential", "log2") for q in ev.qids],
        EXTRA[1]: [_err_ref(qrels[q], run[q], 3) for q in ev.qids],
        # under evaluate_run's trec_eval convention an unspecified gain is linear
        EXTRA[3]: [_ndcg_ref(qrels[q], run[q], 3, "linear", "classic") for q in ev.qids],
    }
    # the references, pinned: q1's ideal DCG@3 uses the unretrieved d4
    assert expected[EXTRA[0]][0] == pytest.approx(
        (7 / math.log2(3)) / (7 + 3 / math.log2(3) + 1 / 2))
    assert expected[EXTRA[1]][0] == pytest.approx(7 / 16 / 2)
    assert expected[EXTRA[3]][0] == pytest.approx(3 / (3 + 2 + 1 / math.log2(3)))
    for key, values in expected.items():
        np.testing.assert_allclose(ev.per_query[key], values, rtol=1e-12, err_msg=key)
    # RankEff on q2: the unjudged x is not a non-relevant document above b and f
    assert _rank_eff_ref(qrels["q2"], run["q2"]) == pytest.approx(
        ((1 - 1 / 3) + (1 - 1 / 3) + (1 - 2 / 3)) / 3)
    assert ev.per_query["rank_eff"][1] == pytest.approx(_rank_eff_ref(qrels["q2"], run["q2"]))


def test_rank_eff_counts_only_retrieved_relevant_documents():
    qrels = {"q1": {"d1": 3, "d2": 0, "d3": 1, "d4": 2, "d5": -1, "d8": 0},
             "q2": {"a": 1, "b": 0}}
    run = {"q1": {"d7": 3.0, "d1": 2.0, "d2": 1.0, "d3": 1.0, "d6": 1.0, "d5": 0.5},
           "q2": {"x": 1.0}}  # nothing judged retrieved
    expected = [_rank_eff_ref(qrels[q], run[q]) for q in ("q1", "q2")]
    assert expected == pytest.approx([2 / 3, 0.0])  # d1, d3 retrieved above d2; d4 missed
    ev = evaluate_run(qrels, run, ["rank_eff"], convention="trec_eval")
    np.testing.assert_allclose(ev.per_query["rank_eff"], expected, rtol=1e-12)
    # retrieving the missed relevant d4, even last, must not lower the score
    more = {**run, "q1": {**run["q1"], "d4": 0.0}}
    again = evaluate_run(qrels, more, ["rank_eff"], convention="trec_eval")
    assert again.per_query["rank_eff"][0] >= ev.per_query["rank_eff"][0]
