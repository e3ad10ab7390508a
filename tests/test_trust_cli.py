"""The command line at its edges (issue 12, item 6; DESIGN §8): one line on
stderr and exit status 2 on any bad input, never a traceback, never invalid
JSON, never two results under one label, and a closed pipe ends it quietly.

Bad inputs go through ``main()`` in-process (fast) and, for the exit path and
pipes, through ``python -m sklearn_rank`` in a subprocess.
"""

import csv
import errno
import gzip
import io
import json
import math
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from sklearn_rank.cli._app import main

QRELS = """\
q1 0 d1 2
q1 0 d2 0
q1 0 d3 1
q2 0 d1 1
q2 0 d5 -1
q3 0 d9 1
q4 0 d9 0
"""
RUN = """\
q1 Q0 d1 1 0.9 bm25
q1 Q0 d2 2 0.8 bm25
q1 Q0 d4 3 0.7 bm25
q2 Q0 d2 1 0.5 bm25
q2 Q0 d1 2 0.5 bm25
q4 Q0 d1 1 0.5 bm25
"""
# NDCG@10 with linear gain by hand (trec_eval's ndcg_cut.10 gives the same:
# q1 0.7602, q2 0.6309): q1 ranks d1 (2), d2 (0), d4 (unjudged), ideal 2, 1;
# q2's tie goes to d2 (unjudged) before d1 (1); q4 has no relevant document.
NDCG10 = {"q1": 2 / (2 + 1 / math.log2(3)), "q2": 1 / math.log2(3), "q4": 0.0}


@pytest.fixture
def files(tmp_path):
    """Paths of good and bad TREC and svmlight files."""
    paths = {}

    def put(name, data):
        path = tmp_path / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        paths[name.replace(".", "_")] = str(path)  # keys for str.format

    put("qrels", QRELS)
    put("run", RUN)
    put("run2", RUN.replace("bm25", "dense").replace("0.9", "0.1"))
    packed = gzip.compress(RUN.encode() * 50)
    put("truncated.gz", packed[: len(packed) // 2])
    crc = bytearray(gzip.compress(RUN.encode()))
    crc[-6] ^= 0xFF  # the CRC-32 in the trailer
    put("crc.gz", bytes(crc))
    deflate = bytearray(gzip.compress(b"q1 Q0 d1 1 0.5 t\n" * 5000))
    for i in range(20, 40):
        deflate[i] ^= 0x55  # inside the deflate stream: zlib.error
    put("deflate.gz", bytes(deflate))
    put("empty", b"")
    put("empty.gz", gzip.compress(b""))
    put("binary", bytes(range(256)) * 4)
    put("unjudged.run", "zz Q0 d1 1 0.5 t\n")
    os.mkdir(tmp_path / "adir")
    paths["adir"] = str(tmp_path / "adir")
    paths["missing"] = str(tmp_path / "missing.run")
    # svmlight / LightGBM files for tune
    rows = [f"{(q + d) % 3} qid:{q} 1:{d} 2:{q % 5}" for q in range(1, 41) for d in range(6)]
    put("train.txt", "\n".join(rows) + "\n")
    put("malformed.txt", "\n".join(rows[:3] + ["1 qid:x 1:zz"] + rows[3:]) + "\n")
    put("nan.txt", "\n".join(rows[:3] + ["nan qid:2 1:1"] + rows[3:]) + "\n")
    put("few.txt", "\n".join(r for r in rows if r.split()[1] in ("qid:1", "qid:2", "qid:3"))
        + "\n")
    put("noqid.txt", "\n".join(r.replace(f" {r.split()[1]}", "") for r in rows) + "\n")
    put("bad.query", "7\n" * 40)  # 280 rows, the file has 240
    return paths


def _one_error_line(capsys_or_text, command="evaluate"):
    err = capsys_or_text if isinstance(capsys_or_text, str) else capsys_or_text.readouterr().err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith(f"sklearn-rank {command}: error: "), err
    return lines[0]


# ------------------------------------------------------------ bad input, in-process

EVALUATE_CASES = [
    # (args, start of the message after "error: ", a part of it)
    (["-m", "ndcg@99999999999999999999"], "-m: ", "at most 2**63 - 1"),
    (["-m", "P.99999999999999999999999"], "-m 'P.99999999999999999999999': ",
     "metric 'p@99999999999999999999999' must be at most 2**63 - 1"),
    (["-m", "ndcg(gain=[1]*10**9)"], "-m: ", "must be a literal"),
    (["-m", "ndcg(log_base=10**10**10)"], "-m: ", "must be a literal"),
    (["--measure=" + "-" * 100000], "--measure: ", "too long"),
    (["-m", "ndcg" + ".a" * 10000], "-m: ", "too long"),
    (["-m", "(" * 500 + "ndcg" + ")" * 500], "-m: ", "Could not parse"),
    (["-m", "ndcg(gain=" + "[" * 150 + "]" * 150 + ")"], "-m: ", "must be a literal"),
    (["-m", "ndcg@1.5"], "-m: ", "integer >= 1"),
    (["-m", "ndcg\x00"], "-m: ", "Could not parse"),
    (["-m", "ndcğ"], "-m: ", "non-ASCII"),
    (["-m", "ndcg#10"], "-m: ", "holds '#'"),
    (["--measure", "zz"], "--measure 'zz': ", "Unknown metric 'zz'"),
    (["-m", "map", "-m", "ndgc@10"], "-m 'ndgc@10': ", "Did you mean 'ndcg'"),
    (["-m", "p@5", "-m", "p(threshold=1.0)@5", "-l", "2"], "-m: ", "Two metrics print as"),
    (["-l", "nan"], "argument -l/--relevance-level: ", "finite number"),
    (["-l", "x"], "argument -l/--relevance-level: ", "expected a number"),
    (["--format", "xml"], "argument --format: ", "invalid choice"),
    (["--plot", "{missing}/x.png"], "--plot '{missing}/x.png': ", "no directory"),
    (["--plot", "{adir}"], "--plot '{adir}': ", "is a directory"),
    (["--plot", "{adir}/x.txt"], "--plot '{adir}/x.txt': ", "unknown image format 'txt'"),
    # trec_eval's flags where its output is not printed: given whatever their value
    (["-M", "0"], "-M needs --format trec", "trec_eval measures only"),
    (["-M", "1", "--format", "json"], "-M needs --format trec", "trec_eval measures only"),
    (["-n", "-m", "err@5", "--format", "trec"], "-n needs --format trec", "measures only"),
    # a cut-off glued to the name: both vocabularies' spellings
    (["-m", "P10"], "-m: ", "Did you mean 'P.10' (trec_eval) or 'p@10' (registry)?"),
    (["-m", "ndcg_cut10"], "-m: ",
     "Did you mean 'ndcg_cut.10' (trec_eval) or \"ndcg(gain='linear')@10\" (registry)?"),
    (["-m", "map5"], "-m: ", "Did you mean 'map@5' (registry) or 'map_cut.5' (trec_eval)?"),
    (["-m", "err_20"], "-m: ", "Did you mean 'err@20' (registry)?"),
    (["-", "-"], "'-' (standard input) is given for 2 files (run, run)", "read once"),
]


@pytest.mark.parametrize("args, start, part", EVALUATE_CASES)
def test_evaluate_bad_option(files, capsys, args, start, part):
    args = [a.format(**files) for a in args]
    assert main(["evaluate", files["qrels"], files["run"], *args]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"sklearn-rank evaluate: error: {start.format(**files)}"), line
    assert part in line
    assert len(line) < 1500


FILE_CASES = [
    # (qrels, run, start of the message, a part of it)
    ("qrels", "missing", "run '{missing}': ", "No such file or directory"),
    ("missing", "run", "qrels '{missing}': ", "No such file or directory"),
    ("qrels", "adir", "run '{adir}': ", "Is a directory"),
    ("adir", "run", "qrels '{adir}': ", "Is a directory"),
    ("qrels", "truncated_gz", "run", "truncated.gz"),
    ("qrels", "crc_gz", "run", "crc.gz"),
    ("qrels", "deflate_gz", "run", "deflate.gz"),
    ("qrels", "empty", "run", "empty"),
    ("qrels", "empty_gz", "run", "empty.gz"),
    ("empty", "run", "qrels", "empty"),
    ("qrels", "binary", "run", "binary"),
    ("qrels", "unjudged_run", "run", "No query has both results and relevance judgments"),
]


@pytest.mark.parametrize("qrels, run, start, part", FILE_CASES)
def test_evaluate_bad_file(files, capsys, qrels, run, start, part):
    assert main(["evaluate", files[qrels], files[run]]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"sklearn-rank evaluate: error: {start.format(**files)}"), line
    assert part in line


@pytest.mark.parametrize("error, part", [
    (PermissionError(errno.EACCES, os.strerror(errno.EACCES), "PATH"), "Permission denied"),
    (MemoryError(), "not enough memory"),
    (EOFError("Compressed file ended before the end-of-stream marker was reached"),
     "corrupt or truncated gzip data"),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), "invalid start byte"),
])
def test_reader_errors_are_one_line(files, capsys, monkeypatch, error, part):
    """Whatever the readers raise of the expected classes (an unreadable file:
    the tests may run as root, who reads every file)."""
    import sklearn_rank.trec

    def read_run(path, **kwargs):
        if isinstance(error, OSError):
            error.filename = path
        raise error

    monkeypatch.setattr(sklearn_rank.trec, "read_run", read_run)
    assert main(["evaluate", files["qrels"], files["run"]]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"sklearn-rank evaluate: error: run '{files['run']}': "), line
    assert part in line


def test_interrupt_exits_130_quietly(files, capsys, monkeypatch):
    import sklearn_rank.trec

    def read_qrels(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sklearn_rank.trec, "read_qrels", read_qrels)
    assert main(["evaluate", files["qrels"], files["run"]]) == 130
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("bug", [KeyError("x"), IndexError("x"), AttributeError("x"),
                                 AssertionError("x"), RecursionError("x")])
def test_bugs_keep_their_traceback(files, monkeypatch, bug):
    """Only the classes bad input raises become a one-line error; a bug is
    not dressed up as the user's mistake."""
    import sklearn_rank.trec

    def read_qrels(*args, **kwargs):
        raise bug

    monkeypatch.setattr(sklearn_rank.trec, "read_qrels", read_qrels)
    with pytest.raises(type(bug)):
        main(["evaluate", files["qrels"], files["run"]])


def test_plot_without_matplotlib(files, capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    target = str(tmp_path / "x.png")
    assert main(["evaluate", files["qrels"], files["run"], "--plot", target]) == 2
    line = _one_error_line(capsys)
    assert line == (f"sklearn-rank evaluate: error: --plot {target!r}: --plot needs "
                    'matplotlib: pip install "sklearn-rank[plot]"')
    assert capsys.readouterr().out == ""  # refused before the evaluation


def test_plot_to_an_unwritable_directory(files, capsys, monkeypatch, tmp_path):
    """Checked before the evaluation (os.access: the tests may run as root)."""
    import sklearn_rank._plots

    monkeypatch.setattr(sklearn_rank._plots.os, "access", lambda path, mode: False)
    target = str(tmp_path / "x.png")
    assert main(["evaluate", files["qrels"], files["run"], "--plot", target]) == 2
    line = _one_error_line(capsys)
    assert line == (f"sklearn-rank evaluate: error: --plot {target!r}: cannot write in "
                    f"{tmp_path}")


def test_plot_without_extension_is_png_under_that_name(files, tmp_path, capsys):
    target = tmp_path / "curves"
    assert main(["evaluate", files["qrels"], files["run"], "-m", "P.5", "--plot",
                 str(target)]) == 0
    assert target.read_bytes().startswith(b"\x89PNG")
    assert not (tmp_path / "curves.png").exists()


COMPARE_CASES = [
    ([], "give at least two runs to compare"),
    (["{run2}", "--baseline", "nope"], "--baseline 'nope' is none of the runs: bm25, dense."),
    (["{run2}", "--alpha", "2"], "argument --alpha: expected a finite number strictly"),
    (["{run2}", "--resamples", "1"], "argument --resamples: expected an integer >= 2"),
    (["{run2}", "--seed", "-1"], "argument --seed: expected an integer from 0 to"),
    (["{run2}", "-m", "ndcg@99999999999999999999"], "-m: The 'k' parameter"),
    (["{run2}", "{missing}"], "run '{missing}': No such file or directory"),
    (["{run2}", "--plot", "{adir}"], "--plot '{adir}': is a directory"),
]


@pytest.mark.parametrize("args, start", COMPARE_CASES)
def test_compare_bad_input(files, capsys, args, start):
    args = [a.format(**files) for a in args]
    assert main(["compare", files["qrels"], files["run"], *args]) == 2
    line = _one_error_line(capsys, "compare")
    assert line.startswith(f"sklearn-rank compare: error: {start.format(**files)}"), line


def test_compare_missing_query_names_the_option(files, capsys, tmp_path):
    shorter = tmp_path / "short.run"
    shorter.write_text("".join(ln + "\n" for ln in RUN.replace("bm25", "x").splitlines()
                               if not ln.startswith("q4")))
    assert main(["compare", files["qrels"], files["run"], str(shorter), "--missing",
                 "raise"]) == 2
    line = _one_error_line(capsys, "compare")
    assert line.startswith("sklearn-rank compare: error: --missing 'raise': The evaluations "
                           "cover different queries"), line


TUNE_CASES = [
    (["--data", "{missing}"], "--data '{missing}': No such file or directory"),
    (["--data", "{adir}"], "--data '{adir}': Is a directory"),
    (["--data", "{empty}"], "--data: "),
    (["--data", "{truncated_gz}"], "--data: "),
    (["--data", "{malformed_txt}"], "--data: "),
    (["--data", "{nan_txt}"], "--data: {nan_txt}: line 4: label nan is not a finite number"),
    (["--data", "{noqid_txt}", "--query", "{bad_query}"], "--data, --query: "),
    (["--data", "{noqid_txt}", "--query", "{missing}"],
     "--query '{missing}': No such file or directory"),
    (["--data", "{few_txt}"], "--folds 5: 2 training queries (of 3;"),
    (["--data", "{train_txt}", "--folds", "40"], "--folds 40: 32 training queries (of 40;"),
    (["--n-queries", "2"], "--n-queries 2: 2 queries: tuning needs at least 3"),
    (["--metric", "map"], "argument --metric: invalid choice: 'map'"),
    (["--k", "0"], "argument --k: expected an integer from 1 to"),
    (["--k", "99999999999999999999"], "argument --k: expected an integer from 1 to"),
    (["--folds", "1"], "argument --folds: expected an integer >= 2, got '1'"),
    (["--n-estimators", "0"], "argument --n-estimators: expected an integer >= 1"),
    (["--n-jobs", "0"], "argument --n-jobs: expected a nonzero integer, got '0'"),
    (["--test-size", "1"], "argument --test-size: expected a finite number strictly"),
    (["--n-queries", "0"], "argument --n-queries: expected an integer >= 1"),
    (["--seed", "-1"], "argument --seed: expected an integer from 0 to 4294967295"),
]


@pytest.mark.parametrize("args, start", TUNE_CASES)
def test_tune_bad_input(files, capsys, args, start):
    args = [a.format(**files) for a in args]
    assert main(["tune", "--n-estimators", "2", *args]) == 2
    line = _one_error_line(capsys, "tune")
    assert line.startswith(f"sklearn-rank tune: error: {start.format(**files)}"), line


@pytest.mark.parametrize("argv, prog", [
    (["nonsense"], "sklearn-rank"),
    (["evaluate"], "sklearn-rank evaluate"),
    (["compare", "--test", "z"], "sklearn-rank compare"),
    (["tune", "--k"], "sklearn-rank tune"),
])
def test_usage_errors_are_one_line(capsys, argv, prog):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith(f"{prog}: error: "), err
    assert f"(see '{prog} --help')" in err


def test_trec_eval_command_suggests_the_cut_off(files, capsys):
    assert main(["trec_eval", "-m", "P10", files["qrels"], files["run"]]) == 2
    assert "illegal measure 'P10'; did you mean 'P.10'?" in _one_error_line(capsys, "trec_eval")


# ------------------------------------------------------------ standard input


@pytest.mark.parametrize("args", [
    ["evaluate", "--format", "table"], ["evaluate", "--format", "json", "-q"],
    ["evaluate", "--format", "csv"], ["evaluate", "--format", "trec", "-c"],  # trec_eval's
    ["evaluate", "--format", "trec", "-m", "err@5", "-m", "map"],  # the registry's
    ["evaluate", "-m", "alpha_nDCG@10"],  # the subtopic qrels reader
    ["compare", "{run2}", "--resamples", "100"], ["trec_eval", "-q", "-c"],
])
@pytest.mark.parametrize("stdin", ["qrels", "run"])
def test_dash_reads_standard_input_everywhere(files, capsys, monkeypatch, args, stdin):
    """'-' names the qrels or a run read from standard input: the output of
    every command and format is the file's."""
    command, *rest = [a.format(**files) for a in args]
    paths = [files["qrels"], files["run"]]
    assert main([command, *paths, *rest]) == 0
    expected = capsys.readouterr().out
    position = ["qrels", "run"].index(stdin)
    with open(paths[position], "rb") as f:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f.read())))
    paths[position] = "-"
    assert main([command, *paths, *rest]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out == expected


# ------------------------------------------------------------ what the output says


@pytest.mark.parametrize("args", [
    ["-m", "map", "-m", "P.5"], ["-m", "map", "-q", "-n"], ["-m", "runid", "-m", "map", "-q"],
    [], ["-m", "err@5", "-m", "map", "-q"],  # official; the registry's lines
])
def test_several_runs_in_trec_format_are_told_apart(files, capsys, args):
    """``--format trec`` with several runs: each run's block opens with its
    ``runid  all  TAG`` line (trec_eval's runid measure), and is otherwise that
    run's own output, which for one run is unchanged (trec_eval's)."""
    common = ["evaluate", "-c", "--format", "trec", *args, files["qrels"]]
    alone = []
    for run in ("run", "run2"):
        assert main([*common, files[run]]) == 0
        alone.append(capsys.readouterr().out.splitlines())
    assert main([*common, files["run"], files["run2"]]) == 0
    lines = capsys.readouterr().out.splitlines()
    starts = [i for i, line in enumerate(lines) if line.split("\t")[0].rstrip() == "runid"]
    assert starts == [0, len(alone[0]) + (not any(a.startswith("runid") for a in alone[0]))]
    for tag, block, own in zip(("bm25", "dense"), (lines[:starts[1]], lines[starts[1]:]),
                               alone, strict=True):
        assert block[0] == f"{'runid':<22}\tall\t{tag}"
        assert block[1:] == [line for line in own if not line.startswith("runid")]


def test_compare_help_offers_what_compare_takes(capsys):
    """A command's help speaks only of the --format choices it accepts."""
    from sklearn_rank.cli._app import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    for name in ("evaluate", "compare"):
        parser = commands[name]
        choices = next(a.choices for a in parser._actions if "--format" in a.option_strings)
        text = parser.format_help()
        for fmt in ("table", "trec", "json", "csv", "text", "markdown", "latex"):
            mentioned = f"--format {fmt}" in text or f"\n{fmt}: " in text
            assert not mentioned or fmt in choices, (name, fmt)
    assert "--format trec" in commands["evaluate"].format_help()  # (the test sees them)


def test_counts_agree_with_their_nouns(files, capsys, tmp_path):
    """'1 win / 1 loss', '1 query', '2 wins': in compare's report and in
    tune's sentence (the same ``Comparison.sentence``)."""
    from sklearn_rank.stats._comparison import Comparison

    one = tmp_path / "one.qrels"
    one.write_text("q1 0 d1 1\nq1 0 d2 1\nq2 0 d1 1\nq2 0 d2 1\n")
    runs = [tmp_path / "a.run", tmp_path / "b.run"]
    runs[0].write_text("q1 Q0 d1 1 2 a\nq1 Q0 d9 2 1 a\nq2 Q0 d9 1 2 a\nq2 Q0 d1 2 1 a\n")
    runs[1].write_text("q1 Q0 d9 1 2 b\nq1 Q0 d1 2 1 b\nq2 Q0 d1 1 2 b\nq2 Q0 d9 2 1 b\n")
    assert main(["compare", str(one), *map(str, runs), "-m", "mrr", "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "1 win / 1 loss" in out and "2 queries;" in out
    counted = re.findall(r"\b(\d+) (wins?|loss(?:es)?|quer(?:y|ies))\b", out)
    assert counted and all((n == "1") == (word in ("win", "loss", "query"))
                           for n, word in counted), counted
    fields = dict(metric="mrr", system="b", baseline="a", mean=0.5, baseline_mean=0.5,
                  difference=0.0, low=-0.5, high=0.5, pvalue=1.0, pvalue_corrected=1.0,
                  significant=False, wins=2, ties=0, losses=0, effect_size=0.0, n_queries=2)
    assert Comparison(**fields).sentence(None).endswith("2 wins / 0 losses")
    # tune's sentence shows the ties too
    assert Comparison(**fields).sentence(None, ties=True).endswith("2 wins / 0 ties / 0 losses")
    fields.update(wins=1, ties=1, losses=1, n_queries=3)
    assert Comparison(**fields).sentence(None, ties=True).endswith("1 win / 1 tie / 1 loss")


def test_plot_cut_off_axes_have_integer_ticks(tmp_path, monkeypatch):
    """The curves' k axis (and the sorted queries' axis) tick at integers
    only; checked on the rendered figure."""
    from matplotlib.figure import Figure

    from sklearn_rank._plots import save_figure

    drawn, savefig = [], Figure.savefig

    def record(figure, *args, **kwargs):
        savefig(figure, *args, **kwargs)
        drawn.extend(figure.axes)

    monkeypatch.setattr(Figure, "savefig", record)
    curves = [("P@k", {"a": [0.5, 0.4, 0.3], "b": [0.6, 0.5, 0.4]})]
    save_figure(tmp_path / "x.png", curves, ("P_3", {"b": [0.1, -0.2, 0.0]}), "a")
    assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG")
    top, bottom = drawn[0], drawn[1]
    for ax in (top, bottom):
        low, high = sorted(ax.get_xlim())
        ticks = [t for t in ax.get_xticks() if low <= t <= high]
        assert len(ticks) >= 2 and all(t == round(t) for t in ticks), ticks
    assert bottom.get_title() == "b vs a: 1 win / 1 loss"


# ------------------------------------------------------------ labels and JSON


def _parse_json(text):
    def refuse(constant):
        raise AssertionError(f"invalid JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


# (trec_eval's convention: ties by decreasing docno, as ndcg_cut.10's)
SAME_LABEL = ["-m", "ndcg_cut.10",
              "-m", "ndcg(gain='linear', empty='one', convention='trec_eval')@10"]
EXACT, ONE = "ndcg_cut_10", "ndcg(gain='linear', empty='one', convention='trec_eval')@10"


def test_two_measures_under_one_trec_name_keep_their_own_labels(files, capsys):
    """``ndcg_cut.10`` and the same NDCG scoring empty queries 1: both were
    printed as ndcg_cut_10 (JSON kept one)."""
    zero = dict(NDCG10)
    one = {**NDCG10, "q4": 1.0}
    base = ["evaluate", files["qrels"], files["run"], *SAME_LABEL, "-q"]

    assert main([*base, "--format", "json"]) == 0
    doc = _parse_json(capsys.readouterr().out)["runs"]["bm25"]
    assert set(doc["mean"]) == {EXACT, ONE}
    assert doc["per_query"][EXACT] == pytest.approx(zero, abs=1e-12)
    assert doc["per_query"][ONE] == pytest.approx(one, abs=1e-12)
    assert doc["mean"][EXACT] == pytest.approx(np.mean(list(zero.values())), abs=1e-12)
    assert doc["mean"][ONE] == pytest.approx(np.mean(list(one.values())), abs=1e-12)

    assert main([*base, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))[1:]
    assert {(m, q) for _, m, q, _, _ in rows} == {(m, q) for m in (EXACT, ONE)
                                                 for q in ("q1", "q2", "q4", "all")}
    assert float(next(v for _, m, q, v, _ in rows if (m, q) == (ONE, "q4"))) == 1.0

    assert main([*base, "--format", "trec"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    values = {(m.strip(), q): float(v) for m, q, v in lines}
    assert len(values) == len(lines) == 8
    assert values[(EXACT, "q4")] == 0.0 and values[(ONE, "q4")] == 1.0

    assert main(["evaluate", files["qrels"], files["run"], *SAME_LABEL]) == 0
    table = capsys.readouterr().out.splitlines()
    assert [r.split()[0] for r in table[2:4]] == [EXACT, ONE.split()[0]]
    assert table[3].startswith(ONE)

    assert main(["compare", files["qrels"], files["run"], files["run2"], *SAME_LABEL,
                 "--resamples", "50"]) == 0
    report = capsys.readouterr().out
    assert f"on {EXACT}:" in report and f"on {ONE}:" in report


@pytest.mark.parametrize("measures, labels", [
    # trec_eval's name goes to the spec that is exactly trec_eval's measure
    (["ndcg_cut.10", "ndcg(gain='linear', ties='average')@10"],
     ["ndcg_cut_10", "ndcg(gain='linear', ties='average')@10"]),
    (["map", "map(threshold=2)"], ["map", "map(threshold=2)"]),
    (["P.5", "p(capped=True)@5"], ["P_5", "p(capped=True)@5"]),
    # both are trec_eval's ndcg: the spec spelled "ndcg" keeps that label
    (["ndcg(gain='linear')", "ndcg"], ["ndcg(gain='linear')", "ndcg"]),
    (["ndcg", "ndcg(gain='linear')"], ["ndcg", "ndcg(gain='linear')"]),
    # -l 2 makes p(threshold=2)@5 exactly trec_eval's P_5; P.5 shares its key
    (["P.5", "p(threshold=2)@5", "-l", "2"], ["P_5", "p(threshold=2)@5"]),
])
def test_labels_are_distinct(files, capsys, measures, labels):
    args = [a for m in measures for a in (["-m", m] if not m.startswith("-") and
                                          m != "2" else [m])]
    assert main(["evaluate", files["qrels"], files["run"], *args, "--format", "json"]) == 0
    assert list(_parse_json(capsys.readouterr().out)["runs"]["bm25"]["mean"]) == labels


def test_plot_families_have_distinct_labels():
    from sklearn_rank._plots import at_k_families
    from sklearn_rank.cli._runs import result_labels
    from sklearn_rank.metrics import parse_metric

    specs = [parse_metric("ndcg_cut.10"), parse_metric("ndcg(gain='linear', empty='one')@10")]
    labels = result_labels(specs, {"convention": "trec_eval", "threshold": 1.0})
    families = at_k_families(specs, labels)
    assert [label for label, _ in families] == ["ndcg_cut@k",
                                               "ndcg(gain='linear', empty='one')@k"]


def test_json_nan_is_null(files, capsys):
    assert main(["evaluate", files["qrels"], files["run"], "-m",
                 "ndcg(gain='linear', empty='nan', convention='trec_eval')@10", "-q",
                 "--format", "json"]) == 0
    doc = _parse_json(capsys.readouterr().out)["runs"]["bm25"]
    per_query = doc["per_query"]["ndcg(gain='linear', empty='nan', convention='trec_eval')@10"]
    assert per_query["q4"] is None
    assert per_query["q1"] == pytest.approx(NDCG10["q1"], abs=1e-12)


def test_runs_sharing_tag_and_file_name_stay_apart(files, capsys):
    assert main(["evaluate", files["qrels"], files["run"], files["run"], "-m", "map",
                 "--format", "json"]) == 0
    assert list(_parse_json(capsys.readouterr().out)["runs"]) == ["bm25 (run)",
                                                                  "bm25 (run) #2"]


# ------------------------------------------------------------ exit path and pipes


def _python(*args, env_extra=None, **kwargs):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(env_extra or {})
    return subprocess.Popen([sys.executable, "-m", "sklearn_rank", *args], env=env,
                            stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.mark.parametrize("args, command, start", [
    (["evaluate", "{qrels}", "{truncated_gz}"], "evaluate", "run"),
    (["evaluate", "{qrels}", "{run}", "-m", "ndcg@99999999999999999999"], "evaluate", "-m: "),
    (["evaluate", "{qrels}", "{run}", "--measure=" + "-" * 100000], "evaluate", "--measure: "),
    (["compare", "{qrels}", "{run}", "{run2}", "--plot", "{adir}"], "compare", "--plot"),
    (["tune", "--data", "{malformed_txt}"], "tune", "--data: "),
    (["tune", "--data", "{few_txt}", "--n-estimators", "2"], "tune", "--folds 5: "),
    (["tune", "--n-jobs", "0"], "tune", "argument --n-jobs"),
])
def test_bad_input_through_the_real_entry(files, args, command, start):
    proc = _python(*[a.format(**files) for a in args], stdout=subprocess.PIPE)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    assert _one_error_line(err, command).startswith(
        f"sklearn-rank {command}: error: {start}")


@pytest.fixture
def big(tmp_path):
    """A qrels file and two runs whose per-query output is ~1 MB, more than a pipe holds."""
    rng = np.random.default_rng(0)
    n_queries, n_docs = 8000, 5
    qid = np.repeat([f"q{i}" for i in range(n_queries)], n_docs)
    doc = np.tile([f"d{j}" for j in range(n_docs)], n_queries)
    rel = rng.integers(0, 3, qid.shape[0])
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {r}\n"
                                            for q, d, r in zip(qid, doc, rel, strict=True)))
    for tag in ("a", "b"):
        score = rng.random(qid.shape[0])
        (tmp_path / tag).write_text("".join(
            f"{q} Q0 {d} 0 {s:.5f} {tag}\n" for q, d, s in zip(qid, doc, score, strict=True)))
    return [str(tmp_path / n) for n in ("qrels", "a", "b")]


def _closed_early(args, *, read_first_line, unbuffered):
    """Run the command, close its stdout (after one line, or at once) and
    return (status, stderr)."""
    proc = _python(*args, stdout=subprocess.PIPE,
                   env_extra={"PYTHONUNBUFFERED": "1"} if unbuffered else None)
    if read_first_line:
        assert proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    return proc.wait(timeout=300), err


def test_closed_pipe_ends_quietly(big):
    """``sklearn-rank evaluate ... -q | head -1`` and friends: status 141 (as a
    shell shows for a command killed by SIGPIPE), nothing on stderr. Repeated
    with and without PYTHONUNBUFFERED, which changes how Python writes."""
    qrels, a, b = big
    runs = 0
    for i in range(12):
        fmt = ("table", "json", "csv", "trec")[i % 4]
        status, err = _closed_early(["evaluate", qrels, a, b, "-q", "--format", fmt],
                                    read_first_line=i % 3 != 0, unbuffered=i % 2 == 0)
        assert (status, err) == (141, ""), (fmt, status, err)
        runs += 1
    for i in range(2):
        status, err = _closed_early(["compare", qrels, a, b, "-m", "map", "--resamples",
                                     "20"], read_first_line=False, unbuffered=i == 0)
        assert (status, err) == (141, ""), err
        status, err = _closed_early(["--help"], read_first_line=False, unbuffered=i == 0)
        assert (status, err) == (141, ""), err
    assert runs == 12


def test_closed_pipe_ends_tune_quietly():
    status, err = _closed_early(["tune", "--n-queries", "30", "--folds", "2",
                                 "--n-estimators", "2"], read_first_line=True,
                                unbuffered=True)
    assert status == 141
    assert "Traceback" not in err and "Exception ignored" not in err
    assert all(line.startswith("  cross-validating") for line in err.splitlines()), err


def test_shell_pipe_into_head(big):
    qrels, a, _ = big
    command = (f"{sys.executable} -m sklearn_rank evaluate {qrels} {a} -q | head -1; "
               "echo status=${PIPESTATUS[0]} >&2")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.stdout.split() == ["measure", "a"]
    assert proc.stderr == "status=141\n"


def test_interrupt_through_the_real_entry(files):
    """Ctrl-C: status 130, no traceback (SIGINT handled by Python's default
    handler, which the test restores in the child)."""
    proc = subprocess.Popen(
        [sys.executable, "-c",
         "import os, signal, sys\n"
         "from sklearn_rank.cli import _app as _cli\n"
         "_cli.build_parser = lambda: os.kill(os.getpid(), signal.SIGINT)\n"
         "sys.exit(_cli.main(['evaluate']))\n"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out, err) == (130, "", "")
