"""Comparison reports: every summary is the evaluation's own, and every table parses.

Issue #24, items 7 and 9: ``compare`` printed the arithmetic mean of gmap's
per-query AP (MAP) where ``evaluate`` prints their geometric mean, and the
mean of trec_eval's counts where it prints their sum; two evaluations without
a shared metric gave an empty report whose ``str()`` raised a TypeError; a
``|`` in a name broke the Markdown table and ``$ ^ ~ { }`` the LaTeX one.
"""

import json
import math
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from sklearn_rank.metrics import evaluate
from sklearn_rank.stats import (
    bootstrap_ci,
    compare,
    paired_ttest,
    randomization_test,
    wilcoxon_test,
)
from sklearn_rank.trec import evaluate_run

REL = 1e-12  # a summary computed by the same rule, perhaps in another order
FLOOR = 1e-5  # trec_eval's gm_map floor


def _data(seed=0, n_queries=40, per_query=8):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), per_query)
    y = rng.integers(0, 3, qid.shape[0])
    y[qid % 9 == 0] = 0  # queries without relevant documents: AP 0, floored for gmap
    return rng, qid, y


def _systems(metrics, weights=False, seed=0):
    rng, qid, y = _data(seed)
    w = np.repeat(rng.uniform(0.2, 3.0, 40), 8) if weights else None
    return {f"S{i}": evaluate(y, y + rng.normal(0, noise, y.shape), qid=qid, metrics=metrics,
                              sample_weight=w)
            for i, noise in enumerate((3.0, 1.0, 0.6))}


def _trec_files(tmp_path, tags=("bm25", "dense"), n_queries=30, seed=0):
    """qrels and one run per tag, later runs less noisy; a few queries whose only
    relevant document the runs do not retrieve (AP 0: gm_map's floor)."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {tag: [] for tag in tags}
    for q in range(n_queries):
        labels = rng.integers(0, 3, 15)
        if q % 7 == 0:
            labels[:] = 0
            labels[14] = 1
        qrels += [f"q{q} 0 d{d} {rel}" for d, rel in enumerate(labels)]
        for i, tag in enumerate(tags):
            scores = labels + rng.normal(0, 3.0 / (1 + 2 * i), 15)
            if q % 7 == 0:
                scores[14] = -100.0  # not in the top 10
            runs[tag] += [f"q{q} Q0 d{d} 0 {scores[d]:.4f} {tag}"
                          for d in np.argsort(-scores)[:10]]
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    paths = []
    for i, tag in enumerate(tags):
        path = tmp_path / f"run{i}.txt"
        path.write_text("\n".join(runs[tag]) + "\n")
        paths.append(str(path))
    return str(tmp_path / "qrels.txt"), paths


def _assert_summaries_are_means(report, evaluations):
    for name, ev in evaluations.items():
        for metric in report.metrics:
            assert report.means[name][metric] == pytest.approx(ev.mean[metric], rel=REL), \
                (name, metric)
    for c in report.comparisons:
        assert c.mean == pytest.approx(evaluations[c.system].mean[c.metric], rel=REL)
        assert c.baseline_mean == pytest.approx(evaluations[c.baseline].mean[c.metric], rel=REL)
    for row in _frame_rows(report):  # the table prints them to 4 decimals
        assert row.mean == pytest.approx(evaluations[row.system].mean[row.metric], abs=5.1e-5)


def _frame_rows(report):
    """The rows of the Markdown table, as (metric, system, mean) records."""
    header, body = _markdown_table(report.to_markdown())
    at = {h: j for j, h in enumerate(header)}

    class Row:
        def __init__(self, cells):
            self.metric, self.system = cells[at["metric"]], cells[at["system"]]
            self.mean = float(cells[at["mean"]])

    return [Row(cells) for cells in body]


# ---------------------------------------------------------------- summaries


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_every_summary_of_a_report_is_the_evaluations_mean(weighted):
    metrics = ["gmap", "map", "ndcg@5", "rr"]
    evaluations = _systems(metrics, weights=weighted)
    report = compare(evaluations, n_resamples=200)
    _assert_summaries_are_means(report, evaluations)
    # the table prints them: gmap's geometric mean, not the arithmetic mean (MAP)
    s0 = evaluations["S0"]
    line = next(line for line in str(report).splitlines() if line.split()[:2] == ["gmap", "S0"])
    assert f"{s0.mean['gmap']:.4f}" in line
    assert f"{np.nanmean(s0.per_query['gmap']):.4f}" not in line
    assert s0.mean["gmap"] < 0.9 * np.nanmean(s0.per_query["gmap"])  # the two differ here


def test_trec_engine_counts_and_geometric_means_are_their_summaries(tmp_path):
    """evaluate_run's counts (sums) and gm_bpref / gm_map (geometric), and the
    registry's gmap, map: the report prints each as the evaluation does."""
    qrels, paths = _trec_files(tmp_path, tags=("bm25", "dense", "rm3"))
    measures = ["gmap", "map", "num_rel_ret", "gm_bpref", "NumRet(rel=1)", "official"]
    evaluations = {name: evaluate_run(qrels, path, measures)
                   for name, path in zip(("bm25", "dense", "rm3"), paths, strict=True)}
    report = compare(evaluations, n_resamples=200)
    assert {"gmap", "num_rel_ret", "gm_bpref", "gm_map", "num_ret", "num_q"} <= set(
        report.metrics)
    _assert_summaries_are_means(report, evaluations)
    assert report.means["bm25"]["num_rel_ret"] == sum(
        evaluations["bm25"].per_query["num_rel_ret"])


def test_gmap_is_compared_on_the_logs_of_the_floored_values():
    evaluations = _systems(["gmap"])
    a, b = (np.asarray(evaluations[s].per_query["gmap"]) for s in ("S0", "S1"))
    assert (a == 0).any()  # the floor matters
    la, lb = np.log(np.maximum(a, FLOOR)), np.log(np.maximum(b, FLOOR))
    for test, run in (("randomization", lambda x, y: randomization_test(
            x, y, n_resamples=500, random_state=3)), ("ttest", paired_ttest),
            ("wilcoxon", wilcoxon_test)):
        report = compare({"S0": evaluations["S0"], "S1": evaluations["S1"]}, test=test,
                         correction=None, n_resamples=500, random_state=3)
        (c,) = report.comparisons
        assert c.pvalue == pytest.approx(run(lb, la).pvalue, rel=REL)
        # the difference of the logs of the geometric means, whose ratio exp(Δ) is
        assert c.difference == pytest.approx((lb - la).mean(), rel=REL)
        assert math.exp(c.difference) == pytest.approx(
            evaluations["S1"].mean["gmap"] / evaluations["S0"].mean["gmap"], rel=1e-9)
        ci = bootstrap_ci(lb - la, n_resamples=500, random_state=3)
        assert (c.low, c.high) == pytest.approx((ci.low, ci.high), rel=REL)
        d = lb - la
        assert c.effect_size == pytest.approx(d.mean() / d.std(ddof=1), rel=REL)
        assert c.wins + c.ties + c.losses == 40
        assert c.ties == int((np.abs(d) <= 1e-12).sum())
    # the report says what its tests compare, in every format
    note = "gmap: mean = the geometric mean, exp(mean(log(max(value, 1e-5))))"
    quantity = "compare log(max(value, 1e-5)) per query"
    for text in (str(report), report.to_markdown(), report.to_latex()):
        assert note in text and quantity in text
    assert "(in the mean of log(max(value, 1e-5)) per query)" in c.sentence(None)
    assert c.compared == "log(max(value, 1e-5))"


def test_a_count_is_summed_and_its_difference_is_of_the_sums(tmp_path):
    qrels, paths = _trec_files(tmp_path)
    evaluations = {name: evaluate_run(qrels, path, ["num_rel_ret", "map"])
                   for name, path in zip(("bm25", "dense"), paths, strict=True)}
    report = compare(evaluations, test="ttest", n_resamples=400, random_state=1)
    c = next(c for c in report.comparisons if c.metric == "num_rel_ret")
    x = np.asarray(evaluations["dense"].per_query["num_rel_ret"])
    y = np.asarray(evaluations["bm25"].per_query["num_rel_ret"])
    assert c.mean == x.sum() and c.baseline_mean == y.sum()
    assert c.difference == pytest.approx(x.sum() - y.sum(), rel=REL)
    ci = bootstrap_ci(x - y, n_resamples=400, random_state=1)
    assert (c.low, c.high) == pytest.approx((30 * ci.low, 30 * ci.high), rel=REL)
    # the test on the per-query values: the sum difference is n x the mean difference
    assert c.pvalue == pytest.approx(paired_ttest(x, y).pvalue, rel=REL)
    assert "num_rel_ret: mean = the sum over the 30 queries" in str(report)
    assert "(in the sum over 30 queries)" in c.sentence(None)


def test_a_weighted_evaluation_is_compared_on_its_weighted_mean():
    evaluations = _systems(["ndcg@5", "gmap"], weights=True)
    ev0, ev1 = evaluations["S0"], evaluations["S1"]
    w = np.asarray(ev0.weights)
    report = compare({"S0": ev0, "S1": ev1}, correction=None, n_resamples=500,
                     random_state=2)
    for c in report.comparisons:
        x, y = (np.asarray(ev.per_query[c.metric]) for ev in (ev1, ev0))
        if c.metric == "gmap":
            x, y = np.log(np.maximum(x, FLOOR)), np.log(np.maximum(y, FLOOR))
            assert math.exp(c.difference) == pytest.approx(
                ev1.mean["gmap"] / ev0.mean["gmap"], rel=1e-9)
        else:
            assert c.difference == pytest.approx(ev1.mean[c.metric] - ev0.mean[c.metric],
                                                 rel=1e-9)
        assert c.difference == pytest.approx(np.average(x - y, weights=w), rel=1e-9)
        # the weighted sign-flip test: each query's difference times w / mean(w)
        scale = w / w.mean()
        assert c.pvalue == pytest.approx(randomization_test(
            x * scale, y * scale, n_resamples=500, random_state=2).pvalue, rel=REL)
        assert c.weighted and "weighted" in c.sentence(None)
    assert "ndcg@5: mean = the weighted mean" in str(report)
    assert "compare w * log(max(value, 1e-5)) / mean(w) per query" in str(report)


def test_weights_must_match():
    weighted = _systems(["ndcg@5"], weights=True)
    plain = _systems(["ndcg@5"])
    with pytest.raises(ValueError, match=r"evaluations\['S1'\] is weighted .* and "
                                         r"evaluations\['P'\] is not"):
        compare({"S1": weighted["S1"], "P": plain["S0"]})
    other = _systems(["ndcg@5"], weights=True, seed=1)  # other weights, same queries
    with pytest.raises(ValueError, match="weigh 40 of their shared queries differently"):
        compare({"S0": weighted["S0"], "T": other["S1"]})


# ---------------------------------------------------------------- no shared metric


def test_evaluations_without_a_shared_metric_are_refused_naming_each_sides_metrics():
    rng, qid, y = _data()
    score = y + rng.normal(0, 1, y.shape)
    a = evaluate(y, score, qid=qid, metrics=["ndcg_cut.10"])
    b = evaluate(y, score, qid=qid, metrics=["ndcg@10"])
    with pytest.raises(ValueError, match=r"share no metric \('a' holds ndcg_cut_10; 'b' holds "
                                         r"ndcg@10\)"):
        compare({"a": a, "b": b})
    with pytest.raises(ValueError, match=r"'ndcg@10' is not a metric of evaluations\['a'\]"):
        compare({"a": a, "b": b}, metrics=["ndcg@10"])
    with pytest.raises(ValueError, match="metrics is empty"):
        compare({"a": a, "b": b}, metrics=[])


def test_compare_cli_prints_evaluates_summaries(tmp_path):
    """``sklearn-rank compare`` prints gm_map's geometric mean and num_rel_ret's
    sum: the numbers ``sklearn-rank evaluate`` prints (by position: the labels
    are the CLI's)."""
    qrels, paths = _trec_files(tmp_path)
    args = [qrels, *paths, "-m", "gm_map", "-m", "num_rel_ret", "-m", "map"]
    means = json.loads(_cli("evaluate", *args, "--format", "json").stdout)["runs"]
    header, body = _markdown_table(_cli("compare", *args, "--format", "markdown",
                                        "--resamples", "200").stdout)
    labels = list(dict.fromkeys(row[0] for row in body))
    assert len(labels) == 3
    for metric, system, mean, *_ in body:
        expected = list(means[system]["mean"].values())[labels.index(metric)]
        assert float(mean) == pytest.approx(expected, abs=5e-5), (metric, system)
    gm = [float(row[2]) for row in body if row[0] == labels[0]]
    ap = [float(row[2]) for row in body if row[0] == labels[2]]
    assert all(g < a - 0.01 for g, a in zip(gm, ap, strict=True))  # not MAP


def _cli(*args):
    proc = subprocess.run([sys.executable, "-m", "sklearn_rank", *args], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


# ---------------------------------------------------------------- Markdown


def _split_row(line):
    """The cells of a GFM table row: split on each ``|`` that no backslash
    escapes (cmark-gfm's rule), then unescaped as GFM renders them."""
    assert line.startswith("|") and line.endswith("|") and not line.endswith("\\|"), line
    cells, cell, i = [], "", 1
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and line[i + 1] == "|":
            cell += "\\|"
            i += 2
            continue
        if line[i] == "|":
            cells.append(cell)
            cell = ""
        else:
            cell += line[i]
        i += 1
    return [_unescape_markdown(c.strip()) for c in cells]


def _unescape_markdown(cell):
    cell = cell.replace("\\|", "|")  # the table's own escape, before the inline parse
    cell = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", cell)  # CommonMark's backslash escapes
    return cell.replace("<br>", "\n")


def _markdown_table(text):
    """(header, body rows) of the first pipe table of ``text``; every row has
    the header's number of cells."""
    lines = text.split("\n")
    table = lines[:lines.index("")]
    assert "\r" not in "".join(table)
    header = _split_row(table[0])
    assert re.fullmatch(r"\|(-{3,}:?\|)+", table[1]) and table[1].count("|") == len(header) + 1
    body = [_split_row(line) for line in table[2:]]
    assert body and all(len(row) == len(header) for row in body)
    return header, body


NAMES = ["b|a_d", "x\\", "x\\|y", "|lead", "trail|", "two\nlines", "$a^b~{c}&#%_<>\\d",
         "a\\\\|", "--``''!`?`,,", "[first]", "tab\tand * stars *"]


def _named_report(names=NAMES):
    evaluations = _systems(["ndcg@5", "gmap"])
    named = dict(zip(names, list(evaluations.values()) * len(names), strict=False))
    report = compare(named, baseline=names[0], n_resamples=100)
    # metric labels are text too (the CLI relabels the metrics)
    return report.relabel({"ndcg@5": "nd|cg_5 $^~{}\\", "gmap": "[gm|ap]\n\\x"}), names


def test_markdown_tables_parse_and_their_cells_round_trip():
    report, names = _named_report()
    header, body = _markdown_table(report.to_markdown())
    assert header == report._header() and header[3] == f"Δ vs {names[0]}"
    expected = list(report._rows())
    assert body == expected
    assert [row[1] for row in body[:len(names)]] == names
    assert {row[0] for row in body} == {"nd|cg_5 $^~{}\\", "[gm|ap]\n\\x"}


# ---------------------------------------------------------------- LaTeX

# The escapes a LaTeX cell may hold, and what each prints (written here, not
# taken from the package, so that a wrong escape fails).
_LATEX = {r"\textbackslash{}": "\\", r"\{": "{", r"\}": "}", r"\$": "$", r"\&": "&",
          r"\#": "#", r"\textasciicircum{}": "^", r"\_": "_", r"\%": "%",
          r"\textasciitilde{}": "~", r"\textless{}": "<", r"\textgreater{}": ">",
          r"\textbar{}": "|", r"$\Delta$": "Δ", r" $^*$": " *", "{}": ""}
_SPECIAL = set("\\{}$&#^_%~<>|")
_TOKEN = re.compile("|".join(re.escape(e) for e in sorted(_LATEX, key=len, reverse=True))
                    + r"|.", re.S)


def _latex_text(cell):
    """What a cell prints; an AssertionError at any special character that is
    not part of an escape."""
    out = []
    for token in _TOKEN.findall(cell):
        if token in _LATEX:
            out.append(_LATEX[token])
        else:
            assert token not in _SPECIAL, f"unescaped {token!r} in {cell!r}"
            out.append(token)
    return "".join(out)


def _latex_table(text):
    """The rows of a booktabs tabular, each cell as the text it prints."""
    lines = [line for line in text.split("\n") if line and not line.startswith("%")]
    assert re.fullmatch(r"\\begin\{tabular\}\{l+r+\}", lines[0])
    assert lines[1] == r"\toprule" and lines[3] == r"\midrule"
    assert lines[-2:] == [r"\bottomrule", r"\end{tabular}"]
    rows = []
    for line in [lines[2], *lines[4:-2]]:
        assert line.endswith(r" \\"), line
        cells = re.split(r"(?<!\\)&", line[:-3])
        assert not cells[0].startswith("["), "a [ after \\\\ is its optional argument"
        rows.append([_latex_text(c.strip()) for c in cells])
    columns = lines[0].count("l") + lines[0].count("r") - 2  # the "l" of "tabular"
    assert all(len(row) == columns for row in rows)
    return rows[0], rows[1:]


def test_latex_tables_escape_every_special_character_and_compile(tmp_path):
    report, names = _named_report()
    latex = report.to_latex()
    header, body = _latex_table(latex)
    assert header == report._header()
    assert body == [[c.replace("\n", " ") for c in row] for row in report._rows()]
    assert [row[1] for row in body[:len(names)]] == [n.replace("\n", " ") for n in names]
    assert r"-{}-`{}`'{}'!{}`?{}`,{}," in latex  # no en dash, quotes, ¡ or ¿
    _compiles(tmp_path, latex)


def _compiles(tmp_path, latex):
    """Compile ``latex`` in a document with pdflatex when it is installed; missing
    glyphs are errors (``\\tracinglostchars=3``)."""
    if shutil.which("pdflatex") is None:  # the escape test above still ran
        return
    (tmp_path / "t.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\tracinglostchars=3\n"
        f"\\begin{{document}}\n{latex}\\end{{document}}\n")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "t.pdf").stat().st_size > 0


def test_compare_cli_tables_with_special_run_tags(tmp_path):
    """Run tags are any non-blank text: ``$``, ``|``, ``^``, ``{`` included."""
    tags = ("b|a_d$", "go^od{~}#%&\\")
    qrels, paths = _trec_files(tmp_path, tags=tags)
    args = ["compare", qrels, *paths, "-m", "map", "-m", "P.5", "--resamples", "100"]
    header, body = _markdown_table(_cli(*args, "--format", "markdown").stdout)
    assert header[3] == f"Δ vs {tags[0]}" and [row[1] for row in body] == list(tags) * 2
    latex = _cli(*args, "--format", "latex").stdout
    header, body = _latex_table(latex)
    assert header[3] == f"Δ vs {tags[0]}" and [row[1] for row in body] == list(tags) * 2
    _compiles(tmp_path, latex)
