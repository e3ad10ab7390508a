"""TREC files at the edges: both readers build the same table from the same
bytes, trec_eval's rules are followed where it has one, damaged files give
one-line errors naming the file, and memory stays proportional to the bytes
of the ids.

trec_eval 10.0's rules, read in its source (usnistgov/trec_eval):

* ``get_qrels.c``: a level is read with ``atol``, so ``1.5`` is 1 and ``2e1``
  is 2; a qrels line with text after its fourth field is malformed.
* ``get_trec_results.c`` (``parse_results_line``): text after the sixth field
  of a run line is skipped ("Skip over rest of line"); trec_eval's own
  ``test/results.test`` has such lines. Scores are read with ``atof``.
* Fields are separated by C's ``isspace`` bytes (space, tab, newline, CR,
  vertical tab, form feed); other bytes belong to a field.
* Neither reader knows a byte-order mark: a file starting with one gives its
  first query the id "\\ufeffq..." (a different query from "q..." in the other
  file, silently). Both of ours drop a leading UTF-8 BOM.

Comparisons with the trec_eval binary run it when the environment variable
``TREC_EVAL`` names it (``TREC_EVAL=/path/to/trec_eval pytest ...``);
otherwise they compare with values printed by trec_eval 10.0 (built from
source) on the same generated files, pinned below.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sklearn_rank.trec import (
    Qrels,
    Run,
    _arrow,
    _fields,
    _io,
    _numbers,
    evaluate_run,
    read_qrels,
    read_run,
)
from sklearn_rank.trec import _column as _column_module
from sklearn_rank.trec._column import IdColumn

TREC_EVAL = os.environ.get("TREC_EVAL", "")
MEASURES = ["map", "P.5", "ndcg_cut.10", "recip_rank", "bpref", "Rprec"]


@pytest.fixture(params=["pyarrow", "numpy"])
def parser(request):
    """The engine= of the readers: pyarrow's CSV reader where it applies, or NumPy only."""
    if request.param == "pyarrow":
        pytest.importorskip("pyarrow")
    return request.param


# ======================================================================= layouts


def _collection(seed=0, n_queries=12):
    """Lines of a qrels file and a run (lists of fields): graded levels,
    negative ones, unjudged and unretrieved documents, tied scores (broken by
    docno), non-ASCII and punctuated ids."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(n_queries):
        qid = f"q{q}" if q != 3 else "q-é"
        docs = [f"{p}{j}" for p, j in zip(rng.choice(["d", "D", "doc.", "文"], 18),
                                           rng.choice(200, 18, replace=False), strict=True)]
        for d in docs[:14]:
            qrels.append([qid, "0", d, str(int(rng.choice([-1, 0, 0, 0, 1, 2, 3])))])
        scores = rng.integers(0, 6, size=16) / 4
        for rank, (d, s) in enumerate(zip(docs[2:], scores, strict=True), 1):
            run.append([qid, "Q0", d, str(rank), f"{s:g}", "tag"])
    run.append(["q_run_only", "Q0", "d1", "1", "1", "tag"])
    return qrels, run


def _render(lines, *, sep=" ", eol="\n", bom=False, lead="", trail="", comments=False,
            blank=False, extra=False, final=True) -> bytes:
    out = []
    for i, fields in enumerate(lines):
        if comments and i % 5 == 0:
            out.append(f"# comment {i}{eol}")
        if blank and i % 7 == 3:
            out.append(f"{eol} \t{eol}")
        if extra and i % 2:
            fields = [*fields, "more", "junk at", "end"]
        out.append(lead + sep.join(fields) + trail + eol)
    text = "".join(out)
    if not final:
        text = text[:-len(eol)]
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


LAYOUTS = {
    "plain": {},
    "bom": dict(bom=True),
    "crlf": dict(eol="\r\n"),
    "tabs": dict(sep="\t"),
    "spaces": dict(sep="   ", lead="  "),
    "trailing": dict(trail=" \t "),
    "comments": dict(comments=True),
    "blank lines": dict(blank=True),  # (trec_eval refuses them in qrels; we skip them)
    "no final newline": dict(final=False),
    "extra fields": dict(extra=True),  # runs only: qrels refuse them, as trec_eval
    "everything": dict(bom=True, eol="\r\n", sep="\t ", trail=" ", comments=True, blank=True,
                       extra=True),
}


def _write(path, data: bytes, compressed=False):
    path.write_bytes(gzip.compress(data) if compressed else data)
    return path


def _files(tmp_path, layout, compressed=False):
    qrels, run = _collection()
    options = LAYOUTS[layout]
    suffix = ".gz" if compressed else ""
    qrels_path = _write(tmp_path / f"qrels{suffix}",
                        _render(qrels, **{**options, "extra": False}), compressed)
    run_path = _write(tmp_path / f"run{suffix}", _render(run, **options), compressed)
    return qrels_path, run_path


def _table_rows(table):
    values = table.rel if isinstance(table, Qrels) else table.score
    return table._qid.items(), table._docno.items(), values.tolist()


def _reference():
    qrels, run = _collection()
    return (Qrels([r[0] for r in qrels], [r[2] for r in qrels], [int(r[3]) for r in qrels]),
            Run([r[0] for r in run], [r[2] for r in run], [float(r[4]) for r in run], "tag"))


@pytest.mark.parametrize("compressed", [False, True], ids=["text", "gzip"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_both_readers_build_the_same_table(tmp_path, layout, compressed):
    """Every layout of the same lines gives the table of the plain lines, in
    both readers, and the same evaluation."""
    qrels_path, run_path = _files(tmp_path, layout, compressed)
    ref_qrels, ref_run = _reference()
    expected = evaluate_run(ref_qrels, ref_run, MEASURES)
    for engine in ("auto", "numpy"):
        qrels, run = read_qrels(qrels_path, engine=engine), read_run(run_path, engine=engine)
        assert _table_rows(qrels) == _table_rows(ref_qrels), engine
        assert _table_rows(run) == _table_rows(ref_run), engine
        assert run.name == "tag"
        assert (qrels.qid == ref_qrels.qid).all() and (run.docno == ref_run.docno).all()
        assert evaluate_run(qrels, run, MEASURES) == expected


def test_plain_files_are_read_by_pyarrow(tmp_path):
    """The plain layout goes through pyarrow (so the test above compares two
    readers); a BOM does not stop it."""
    pytest.importorskip("pyarrow")
    for layout in ("plain", "bom"):
        qrels_path, run_path = _files(tmp_path, layout)
        for path, n_fields, number, integer in ((qrels_path, 4, 3, True),
                                                 (run_path, 6, 4, False)):
            buf, _ = _io._read_buffer(path, None)
            fields = _arrow.ArrowFields.parse(buf, str(path), n_fields, (0, 2), number,
                                               integer)
            assert fields is not None and fields.plain(), (layout, path)


def _trec_eval(qrels_path, run_path) -> dict:
    """{(measure, qid): value} printed by the trec_eval binary."""
    args = [TREC_EVAL, "-q"] + [f"-m{m}" for m in MEASURES] + [str(qrels_path), str(run_path)]
    out = subprocess.run(args, capture_output=True, check=True).stdout.decode("utf-8")
    values = {}
    for line in out.splitlines():
        measure, qid, value = line.split("\t")
        values[measure.strip(), qid] = float(value)
    return values


def _ours(ev) -> dict:
    values = {(m.replace(".", "_"), "all"): ev.mean[m] for m in MEASURES}
    for m in MEASURES:
        for qid, value in zip(ev.qids, ev.per_query[m], strict=True):
            values[m.replace(".", "_"), qid] = value
    return values


# trec_eval 10.0 on the generated files, every layout but the BOM (all the same):
# `trec_eval -m map -m P.5 -m ndcg_cut.10 -m recip_rank -m bpref -m Rprec qrels run`
PINNED = {"map": 0.3838, "P_5": 0.2500, "ndcg_cut_10": 0.4021, "recip_rank": 0.4383,
          "bpref": 0.4065, "Rprec": 0.3066}
# ... and on the two files with a BOM: the first line of each file has the
# query id "\ufeffq0", the others "q0", so trec_eval evaluates 13 queries
# (num_q), not 12; with a BOM on the qrels only, it stops (status 4: the judged
# query "\ufeffq0" has no results).
PINNED_BOM = {"map": 0.3512, "P_5": 0.2154, "ndcg_cut_10": 0.3658, "recip_rank": 0.4046,
              "bpref": 0.3753, "Rprec": 0.2788}


@pytest.mark.parametrize("layout", [k for k in LAYOUTS
                                    if k not in ("bom", "blank lines", "everything")])
def test_layouts_match_the_trec_eval_binary(tmp_path, layout, parser):
    qrels_path, run_path = _files(tmp_path, layout)
    ours = _ours(evaluate_run(read_qrels(qrels_path, engine=parser),
                              read_run(run_path, engine=parser), MEASURES,
                              convention="trec_eval"))
    if TREC_EVAL:
        theirs = _trec_eval(qrels_path, run_path)
        assert set(theirs) == set(ours)
        for key, value in theirs.items():  # trec_eval prints 4 decimals
            assert ours[key] == pytest.approx(value, abs=5e-5), key
    else:
        for measure, value in PINNED.items():
            assert ours[measure, "all"] == pytest.approx(value, abs=5e-5), measure


def test_a_bom_splits_a_query_in_trec_eval(tmp_path, parser):
    """trec_eval keeps a BOM in the first query id: its numbers move (one
    query becomes two), or it stops. We drop the BOM: the plain numbers."""
    qrels, run = _collection()
    qrels_path = _write(tmp_path / "qrels", _render(qrels, bom=True))
    run_path = _write(tmp_path / "run", _render(run, bom=True))
    plain_run = _write(tmp_path / "plain.run", _render(run))
    for path in (run_path, plain_run):
        ours = _ours(evaluate_run(read_qrels(qrels_path, engine=parser),
                                  read_run(path, engine=parser), MEASURES,
                                  convention="trec_eval"))
        for measure, value in PINNED.items():
            assert ours[measure, "all"] == pytest.approx(value, abs=5e-5), measure
    if not TREC_EVAL:
        return
    theirs = _trec_eval(qrels_path, run_path)
    assert ("map", "\ufeffq0") in theirs and ("map", "q0") in theirs
    for measure, value in PINNED_BOM.items():
        assert theirs[measure, "all"] == pytest.approx(value, abs=5e-5), measure
    with pytest.raises(subprocess.CalledProcessError):
        _trec_eval(qrels_path, plain_run)


# ================================================================ trec_eval's rules


@pytest.mark.parametrize("token, level", [("2", 2.0), ("+2", 2.0), ("-1", -1.0), ("007", 7.0),
                                          ("1.0", 1.0), ("3.", 3.0), ("-0", 0.0)])
def test_integer_levels_are_read(tmp_path, token, level, parser):
    path = _write(tmp_path / "qrels", f"q1 0 d1 {token}\nq1 0 d2 0\n".encode())
    assert read_qrels(path, engine=parser).rel.tolist() == [level, 0.0]


@pytest.mark.parametrize("token, atol", [("1.5", 1), ("2e1", 2), ("0.5", 0), ("-1.5", -1),
                                         (".5", 0), ("1e0", None), ("10e-1", 10)])
def test_non_integer_levels_are_refused(tmp_path, token, atol, parser):
    """trec_eval would truncate these (atol): a silent wrong gain. "1e0" is 1
    for both, and accepted."""
    path = _write(tmp_path / "judged.qrels", f"q1 0 d1 1\n\nq1 0 d2 {token}\n".encode())
    if atol is None:
        assert read_qrels(path, engine=parser).rel.tolist() == [1.0, 1.0]
        return
    message = (f"{path}: line 3: relevance level {token!r} is not an integer; trec_eval reads "
               f"levels as integers and would read it as {atol}")
    with pytest.raises(ValueError, match=re.escape(message)):
        read_qrels(path, engine=parser)


@pytest.mark.parametrize("reader, text, message", [
    (read_qrels, "q1 0 d1 1_0\n", "line 1: relevance level '1_0' is not a finite number."),
    (read_run, "q1 Q0 d1 1 1_0 t\n", "line 1: score '1_0' is not a finite number."),
    (read_run, "q1 Q0 d1 1 0x10 t\n", "line 1: score '0x10' is not a finite number."),
])
def test_numbers_c_reads_otherwise_are_refused(tmp_path, reader, text, message, parser):
    """Python reads "1_0" as 10, C's atof/atol (trec_eval) as 1."""
    path = _write(tmp_path / "file", text.encode())
    with pytest.raises(ValueError, match=re.escape(f"{path}: {message}")):
        reader(path, engine=parser)


def test_levels_from_arrays_and_dicts_follow_the_same_rule():
    assert Qrels(["q"], ["d"], [2.0]).rel.tolist() == [2.0]
    assert Qrels.from_dict({"q": {"d": 3, "e": True}}).rel.tolist() == [3.0, 1.0]
    message = ("Qrels: rel 1.5 of document 'e' for query 'q' is not an integer: trec_eval "
               "reads relevance levels as integers (it would read this one as 1) (2 rows in "
               "all).")
    with pytest.raises(ValueError, match=re.escape(message)):
        Qrels.from_dict({"q": {"d": 1, "e": 1.5, "f": -0.5}})
    with pytest.raises(ValueError, match="Qrels: rel nan of document 'd' for query 'q' is not "
                                         "a finite number"):
        Qrels(["q"], ["d"], [np.nan])
    with pytest.raises(ValueError, match="is not an integer"):
        evaluate_run({"q": {"d": 0.5}}, {"q": {"d": 1.0}}, ["map"])
    with pytest.raises(ValueError, match="Run: score inf of document 'd' for query 'q' is not"):
        Run.from_dict({"q": {"d": np.inf}})


def test_ids_with_nul_are_refused():
    """trec_eval cuts an id at a NUL; NumPy's bytes arrays drop trailing NULs:
    "a" and "a\\x00" would merge."""
    for qrels in ({"q": {"a\x00": 1, "a": 0}}, {"q\x00x": {"a": 1}}):
        with pytest.raises(ValueError, match="ids must not contain NUL characters"):
            Qrels.from_dict(qrels)
    with pytest.raises(ValueError, match="docno ids must not contain NUL"):
        Run(np.array([b"q", b"q"]), np.array([b"a\x00b", b"ab"]), [1.0, 2.0])
    assert Run(np.array(["q"]), np.array([b"ab"]), [1.0])._docno.items() == [b"ab"]


def test_run_lines_may_carry_text_after_the_sixth_field(tmp_path, parser):
    text = "q1 Q0 d1 1 2.5 tagA junk\nq1 Q0 d2 2 1.5 tagB more junk\tat end\n"
    run = read_run(_write(tmp_path / "run", text.encode()), engine=parser)
    assert _table_rows(run) == ([b"q1", b"q1"], [b"d1", b"d2"], [2.5, 1.5])
    assert run.name == "tagB"  # the sixth field of the last line
    with pytest.raises(ValueError, match="line 1: expected 4 fields"):  # qrels: malformed
        read_qrels(_write(tmp_path / "qrels", b"q1 0 d1 1 junk\n"), engine=parser)


def test_control_bytes_belong_to_their_field(tmp_path, parser):
    """Only C's whitespace separates fields (as in trec_eval)."""
    run = read_run(_write(tmp_path / "run", b"q1 Q0 d\x01x 1 2 t\nq1\vQ0\fd2 2 1 t\n"),
                   engine=parser)
    assert run._docno.items() == [b"d\x01x", b"d2"]


@pytest.mark.parametrize("data, message", [
    (b"q1 0 d1 1\nq1 0 d\x002 1\n", "line 2: a NUL byte, which a text file does not hold"),
    ("q1 0 d1 1\n".encode("utf-16"), "line 1: a NUL byte"),
    (b"q1 0 d1 1\rq1 0 d2 0\n", "line 1: a carriage return inside the line"),
])
def test_bytes_no_text_file_holds(tmp_path, data, message, parser):
    path = _write(tmp_path / "odd.qrels", data)
    with pytest.raises(ValueError, match=re.escape(f"{path}: {message}")):
        read_qrels(path, engine=parser)


def test_ids_are_bytes_whatever_their_encoding(tmp_path, parser):
    """Latin-1 ids are matched as bytes (trec_eval's strcmp); shown as
    Python decodes file names (surrogateescape), which gives the bytes back."""
    qrels = read_qrels(_write(tmp_path / "q", b"q1 0 caf\xe9 1\nq1 0 cafe 0\n"),
                       engine=parser)
    run = read_run(_write(tmp_path / "r", b"q1 Q0 cafe 1 2 t\nq1 Q0 caf\xe9 2 1 t\n"),
                   engine=parser)
    assert qrels.docno.tolist() == ["caf\udce9", "cafe"]
    assert qrels.docno[0].encode("utf-8", "surrogateescape") == b"caf\xe9"
    assert evaluate_run(qrels, run, ["recip_rank"]).mean["recip_rank"] == 0.5


# ========================================================= damaged or missing files


def _gzip_damages():
    data = gzip.compress(b"".join(f"q{i} 0 d{i} 1\n".encode() for i in range(500)))
    crc = bytearray(data)
    crc[-8] ^= 0xFF  # the CRC-32 of the content
    body = bytearray(data)
    body[len(data) // 2] ^= 0xFF
    return {
        "truncated": data[:len(data) // 2],
        "only the magic": data[:2],
        "crc": bytes(crc),
        "corrupt body": bytes(body),
        "trailing garbage": data + b"garbage",
    }


@pytest.mark.parametrize("damage", list(_gzip_damages()))
def test_damaged_gzip_is_a_one_line_error(tmp_path, damage, parser):
    path = _write(tmp_path / "judgments.qrels.gz", _gzip_damages()[damage])
    with pytest.raises(ValueError) as error:
        read_qrels(path, engine=parser)
    message = str(error.value)
    assert message.startswith(f"{path}: cannot decompress this gzip file: ")
    assert "\n" not in message


@pytest.mark.parametrize("case", ["garbage", "empty", "directory", "missing", "latin-1 text"])
def test_unreadable_files_are_one_line_errors(tmp_path, case, parser):
    path = tmp_path / "input.qrels"
    if case == "garbage":
        path.write_bytes(np.random.default_rng(0).integers(0, 256, 4000, np.uint8).tobytes())
    elif case == "empty":
        path.write_bytes(b"")
    elif case == "directory":
        path.mkdir()
    elif case == "latin-1 text":
        path.write_bytes("héllo wörld\n".encode("latin-1"))
    with pytest.raises((ValueError, OSError)) as error:
        read_qrels(path, engine=parser)
    assert str(path) in str(error.value) and "\n" not in str(error.value)
    assert type(error.value) in (ValueError, FileNotFoundError, IsADirectoryError)


def test_pipes_are_read_to_their_end(tmp_path):
    """A path that is not a regular file (process substitution, /dev/stdin)."""
    r, w = os.pipe()
    os.write(w, b"q1 0 d1 1\nq1 0 d2 0\n")
    os.close(w)
    try:
        assert _table_rows(read_qrels(f"/dev/fd/{r}")) == ([b"q1", b"q1"], [b"d1", b"d2"],
                                                           [1.0, 0.0])
    finally:
        os.close(r)


def test_text_buffers_with_a_bom():
    assert read_qrels(io.StringIO("\ufeffq1 0 d1 1\n")).qid.tolist() == ["q1"]


# ======================================================= memory: the bytes of the ids


def _strings_reference(strings):
    return sorted(set(strings))


@pytest.mark.parametrize("seed", range(4))
def test_column_with_a_few_long_strings(seed):
    """A column whose padded form would be huge works on classes of lengths:
    hashes, comparisons, order and text agree with Python on the bytes."""
    rng = np.random.default_rng(seed)
    n = 3000
    strings = [bytes(rng.choice(list(b"ab"), int(k))) for k in rng.integers(1, 12, n)]
    for i in rng.choice(n, 6, replace=False):  # a few long ones, some sharing prefixes
        strings[i] = strings[i] + b"x" * int(rng.integers(2_000, 60_000))
    strings[7] = strings[11] = b"a" * 50_000  # equal long strings
    column = IdColumn.from_strings(strings)
    assert not column.compact and column.width < 50_000
    short = IdColumn.from_strings([s[:12] for s in strings])
    assert short.compact
    # hashes: equal strings, equal hashes; a long string hashes as in a compact column
    hashes = column.hash()
    assert hashes[7] == hashes[11]
    assert len(set(hashes.tolist())) == len(set(strings))
    assert hashes[7] == IdColumn.from_strings([strings[7]]).hash()[0]
    rows = rng.permutation(n)
    assert (column.hash(rows) == hashes[rows]).all()
    # comparisons
    other = rng.permutation(n)
    expected = np.array([strings[a] == strings[b] for a, b in zip(rows, other, strict=True)])
    assert (column.equal(rows, column, other) == expected).all()
    assert column.equal(np.array([7]), column, np.array([11]))[0]
    changes = [strings[i + 1] != strings[i] for i in range(n - 1)]
    assert column.changes().tolist() == changes
    # order: as sorting the bytes
    key = column.sort_key(rows)
    order = np.argsort(key, kind="stable")
    assert [strings[i] for i in rows[order]] == sorted(strings[i] for i in rows)
    ranks = {s: i for i, s in enumerate(_strings_reference(strings))}
    assert len(set(key.tolist())) == len(ranks)
    # text
    texts = column.texts()
    assert texts.dtype == object and texts.tolist() == [s.decode() for s in strings]


@pytest.mark.parametrize("long_token, value", [("0." + "0" * 100_000 + "1", None),
                                               ("1" + "x" * 100_000, "error")])
def test_long_number_tokens(tmp_path, parser, long_token, value):
    """A number token far longer than the others (the column is not padded
    to it): read whole, or refused with its line."""
    lines = [f"q{i // 50} Q0 d{i} {i} {i / 7} t\n" for i in range(3000)]
    lines[1234] = f"q24 Q0 d1234 1 {long_token} t\n"
    path = _write(tmp_path / "run", "".join(lines).encode())
    fields = _fields.Fields(np.frombuffer(path.read_bytes(), np.uint8), str(path), 6, "x")
    assert not fields.column(4).compact  # the case this test is about
    if value == "error":
        with pytest.raises(ValueError, match=re.escape(f"{path}: line 1235: score '1xxx")):
            read_run(path, engine=parser)
        return
    run = read_run(path, engine=parser)
    assert run.score[1234] == float(long_token) and run.score[1233] == 1233 / 7


def _peak_script(reader: str, long: bool, n_queries=60, depth=150, size=3_000_000) -> str:
    """A script that writes a run and qrels (a few ids ``size`` bytes long,
    or short stand-ins that sort the same), evaluates them, and prints the
    per-query values and the peak memory NumPy used (tracemalloc)."""
    return textwrap.dedent(f"""
        import json, resource, sys, tempfile, tracemalloc, os
        import numpy as np
        from sklearn_rank.trec import evaluate_run, read_qrels, read_run
        size = {size if long else 1}
        long_doc = "d5" + "x" * size      # tied with d1..d9: sorts between d5 and d6
        long_qid = "q7" + "y" * size      # a query of its own, between q7 and q8
        rng = np.random.default_rng(0)
        qrels, run = [], []
        for q in range({n_queries}):
            docs = [f"d{{j}}" for j in range({depth})]
            if q == 3:
                docs[7] = long_doc
            for j, d in enumerate(docs):
                if j % 3 == 0 or d == long_doc:
                    qrels.append(f"q{{q}} 0 {{d}} {{(j // 3) % 3 if d != long_doc else 2}}\\n")
                run.append(f"q{{q}} Q0 {{d}} {{j}} {{1.0 if j < 12 else 1 / (j + 1)}} t\\n")
        qrels.insert(200, f"{{long_qid}} 0 d1 1\\n")  # one line each: its bytes once
        run.insert(500, f"{{long_qid}} Q0 d1 1 0.5 t\\n")
        root = tempfile.mkdtemp()
        with open(os.path.join(root, "qrels"), "w") as f:
            f.writelines(qrels)
        with open(os.path.join(root, "run"), "w") as f:
            f.writelines(run)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        ev = evaluate_run(read_qrels(os.path.join(root, "qrels"), engine={reader!r}),
                          read_run(os.path.join(root, "run"), engine={reader!r}),
                          ["map", "ndcg_cut.10", "recip_rank", "P.5"])
        peak = tracemalloc.get_traced_memory()[1]
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(json.dumps({{"peak": peak, "grown_kib": grown,
                           "values": {{m: v.tolist() for m, v in ev.per_query.items()}},
                           "qids": [len(q) for q in ev.qids.tolist()]}}))
    """)


@pytest.mark.parametrize("reader", ["pyarrow", "numpy"])
def test_memory_follows_the_bytes_of_the_ids(reader):
    """A 3 MB docno (in the run and the qrels) and a 3 MB query id among
    9,000 rows: before, every row was padded to 3 MB (27 GB); now the peak
    is a few times the bytes of the files, and the evaluation equals the one
    with short stand-ins that sort the same."""
    if reader == "pyarrow":
        pytest.importorskip("pyarrow")
    results = {}
    for long in (True, False):
        proc = subprocess.run([sys.executable, "-c", _peak_script(reader, long)],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        results[long] = __import__("json").loads(proc.stdout)
    assert results[True]["values"] == results[False]["values"]
    assert max(results[True]["qids"]) > 3_000_000  # the long query id was evaluated
    # the files hold ~24 MB of ids (3 MB ids written 4 times, in each reader's
    # buffers): NumPy's peak stays within a small multiple of that
    assert results[True]["peak"] < 200e6, results[True]["peak"]
    assert results[True]["grown_kib"] < 400e3, results[True]["grown_kib"]


@pytest.mark.parametrize("seed", range(4))
def test_block_scan_finds_the_fields_python_splits(monkeypatch, seed):
    """The NumPy reader's scan of the usual layout, in blocks, against
    Python's split of every line: the same fields wherever a block ends
    (blocks of 7 bytes here), and None, so the careful path decides, for
    anything else (a tab is a separator, '#', CR, a blank line, a seventh
    field, an empty last line, a leading space)."""
    monkeypatch.setattr(_fields, "_BLOCK", 7)
    rng = np.random.default_rng(seed)
    lines = [f"q{rng.integers(30)} Q0 d{rng.integers(10**rng.integers(1, 9))} {i} "
             f"{rng.normal():.{rng.integers(1, 8)}f} tag\n" for i in range(200)]
    text = "".join(lines).replace(" tag", "\ttag", 1)
    buf = np.frombuffer(text.encode(), np.uint8)
    seps = _fields._plain_separators(buf, 6)
    assert seps is not None
    fields = _fields.Fields(buf, "run", 6, "x", extra=True)
    expected = [line.split() for line in text.splitlines()]
    assert len(fields) == len(expected)
    for j in range(6):
        assert fields.column(j).items() == [row[j].encode() for row in expected]
    assert fields.last(5) == b"tag"
    for bad in ("q1 Q0 d#1 1 2 t\n", "q1 Q0 d1 1 2 t\r\n", "\n", "q1 Q0 d1 1 2 t x\n",
                " q1 Q0 d1 1 2 t\n", "q1 Q0  d1 1 2 t\n"):
        at = int(rng.integers(1, len(lines)))
        other = "".join(lines[:at]) + bad + "".join(lines[at:])
        assert _fields._plain_separators(np.frombuffer(other.encode(), np.uint8), 6) is None
    assert _fields._plain_separators(np.frombuffer(text[:-1].encode(), np.uint8), 6) is None


@pytest.mark.parametrize("equal_lengths", [True, False])
def test_compacted_columns_and_blocks_of_rows(monkeypatch, equal_lengths):
    """A column copied out of its file's buffer (so the file can be freed)
    holds the same strings, hashes and sorts the same; numbers, integer
    checks and hashes read in blocks of rows (3 here) give what one block
    gives, and a bad token in a later block is still named with its line."""
    rng = np.random.default_rng(7)
    width = 9 if equal_lengths else None
    docnos = [f"D{int(d):08d}" if width else f"d{int(d)}"
              for d in rng.choice(10**7, size=50, replace=False)]
    text = "".join(f"q{i // 10} Q0 {d} {i} {rng.normal():.5f} t\n"
                   for i, d in enumerate(docnos)).encode()
    buf = np.frombuffer(text, np.uint8)
    whole = _fields.Fields(buf, "run", 6, "x", extra=True)
    column = whole.column(2)
    compact = column.compacted()
    assert compact.buf.shape[0] == sum(map(len, docnos)) + 8  # its bytes, not the file's
    assert compact.items() == column.items() == [d.encode() for d in docnos]
    assert np.array_equal(compact.hash(), column.hash())
    assert np.array_equal(np.argsort(compact.sort_key(), kind="stable"),
                          np.argsort(column.sort_key(), kind="stable"))
    one_block = (column.hash(), whole.numbers(4, "score"))
    monkeypatch.setattr(_numbers, "_ROWS", 3)
    monkeypatch.setattr(_column_module, "_ROWS", 3)
    assert column.compacted().items() == compact.items()
    assert np.array_equal(compact.hash(), one_block[0])
    assert np.array_equal(column.hash(), one_block[0])
    assert np.array_equal(whole.numbers(4, "score"), one_block[1])
    assert np.array_equal(whole.numbers(3, "rank", integer=True), np.arange(50.0))
    bad = text.replace(b" 47 ", b" 4.5 ")
    fields = _fields.Fields(np.frombuffer(bad, np.uint8), "run", 6, "x", extra=True)
    with pytest.raises(ValueError, match="run: line 48: rank '4.5' is not an integer"):
        fields.numbers(3, "rank", integer=True)
    bad = text.replace(b" 46 ", b" 4_6 ")
    fields = _fields.Fields(np.frombuffer(bad, np.uint8), "run", 6, "x", extra=True)
    with pytest.raises(ValueError, match="run: line 47: rank '4_6' is not a finite number"):
        fields.numbers(3, "rank")


@pytest.mark.parametrize("odd", [None, b"x", b"-", b".", b"+", b"\x7f", b"\xd9"])
def test_one_digit_levels_are_read_at_once(odd):
    """A column of one-digit tokens (the usual levels) is read from its bytes
    at once, without blocks or an integer check: the values Python reads. A
    one-byte token that is not a digit sends the column down the general path,
    which names its line."""
    rng = np.random.default_rng(3)
    levels = rng.integers(0, 10, size=300)
    tokens = [str(v).encode() for v in levels]
    if odd is not None:
        tokens[217] = odd
    text = b"".join(b"q%d 0 d%d %s\n" % (i // 7, i, t) for i, t in enumerate(tokens))
    fields = _fields.Fields(np.frombuffer(text, np.uint8), "qrels", 4, "x")
    assert _numbers.FastValues(fields.column(3)).digits == (odd is None)
    if odd is None:
        values = fields.numbers(3, "relevance level", integer=True)
        assert values.dtype == np.float64 and values.tolist() == [float(t) for t in tokens]
        (_, _), same = fields.ids_and_numbers((0, 2), 3, "relevance level", integer=True)
        assert same.tolist() == values.tolist()
        return
    with pytest.raises(ValueError, match="qrels: line 218: relevance level"):
        fields.numbers(3, "relevance level", integer=True)
