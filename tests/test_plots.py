"""Plots from Python (issue 25, item 8): ``Evaluation.plot`` and ``Report.plot``
draw what ``sklearn-rank evaluate/compare --plot`` draws, with the same
functions (``sklearn_rank._plots``); rendered to PNG with the Agg backend."""

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from sklearn_rank.cli._app import main  # noqa: E402
from sklearn_rank.metrics import evaluate  # noqa: E402
from sklearn_rank.stats import compare, paired_values  # noqa: E402
from sklearn_rank.trec import evaluate_run  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _saved(ax, path):
    """Render ``ax``'s figure to ``path``; the bytes, checked to be a PNG."""
    ax.figure.savefig(path)
    data = path.read_bytes()
    assert data.startswith(PNG) and len(data) > 1000
    return data


def _integer_ticks(ax):
    low, high = sorted(ax.get_xlim())
    ticks = [t for t in ax.get_xticks() if low <= t <= high]
    return len(ticks) >= 2 and all(t == round(t) for t in ticks)


def _systems(n_queries=40, seed=0):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), 12)
    y = rng.integers(0, 3, qid.shape[0])
    scores = {"A": y + rng.normal(0, 2.0, y.shape), "B": y + rng.normal(0, 0.7, y.shape),
              "C": y + rng.normal(0, 1.5, y.shape)}
    return y, qid, scores


# ---------------------------------------------------------------- Evaluation.plot

def test_curves_are_the_means_per_cut_off(tmp_path):
    y, qid, scores = _systems()
    metrics = [f"p@{k}" for k in (1, 2, 3, 5, 10)] + ["ndcg@5", "ndcg@10"]
    ev = evaluate(y, scores["B"], qid=qid, metrics=metrics)
    ax = ev.plot(label="B")
    _saved(ax, tmp_path / "curves.png")
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines) == ["B: p@k", "B: ndcg@k"]
    p, ndcg = lines["B: p@k"], lines["B: ndcg@k"]
    assert p.get_xdata().tolist() == [1, 2, 3, 5, 10]
    assert p.get_ydata() == pytest.approx([ev.mean[f"p@{k}"] for k in (1, 2, 3, 5, 10)],
                                          rel=1e-12)
    assert ndcg.get_xdata().tolist() == [5, 10]
    assert ndcg.get_ydata() == pytest.approx([ev.mean["ndcg@5"], ev.mean["ndcg@10"]],
                                             rel=1e-12)
    assert ax.get_xlabel() == "k" and _integer_ticks(ax)


def test_evaluations_overlay_on_one_axes(tmp_path):
    y, qid, scores = _systems()
    metrics = ["p@1", "p@2", "p@3"]
    a, b = (evaluate(y, scores[s], qid=qid, metrics=metrics) for s in "AB")
    ax = a.plot(label="A")
    assert b.plot(ax, label="B") is ax
    assert [line.get_label() for line in ax.get_lines()] == ["A", "B"]
    assert ax.get_lines()[1].get_ydata() == pytest.approx(list(b.mean.values()), rel=1e-12)
    assert ax.get_ylabel() == "p@k"
    _saved(ax, tmp_path / "overlay.png")


def test_bars_are_the_means_labelled_by_their_keys(tmp_path):
    y, qid, scores = _systems()
    ev = evaluate(y, scores["A"], qid=qid, metrics=["map", "ndcg@10", "P.5", "mrr"])
    ax = ev.plot()  # a metric without other cut-offs: bars ("auto")
    _saved(ax, tmp_path / "bars.png")
    keys = ["map", "ndcg@10", "P_5", "mrr"]
    assert [t.get_text() for t in ax.get_xticklabels()] == keys
    assert [bar.get_height() for bar in ax.containers[0]] == pytest.approx(
        [ev.mean[k] for k in keys], rel=1e-12)
    # a mix of a family and a lone metric: every metric as a bar, none left out
    mixed = evaluate(y, scores["A"], qid=qid, metrics=["p@1", "p@2", "map"])
    assert len(mixed.plot().containers[0]) == 3
    # metrics= picks (any spelling) and orders
    ax = ev.plot(metrics=["mrr", "p@5"], kind="bar")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["mrr", "P_5"]


def test_bad_arguments_name_the_fix():
    y, qid, scores = _systems(n_queries=5)
    ev = evaluate(y, scores["A"], qid=qid, metrics=["p@1", "p@2", "map"])
    with pytest.raises(ValueError, match=r"kind='curve'.*'map' .*has no other cut-off.*"
                                         r"kind='bar'"):
        ev.plot(kind="curve")
    assert len(ev.plot(metrics=["p@1", "p@2"], kind="curve").get_lines()) == 1
    with pytest.raises(ValueError, match="kind must be one of 'auto', 'curve', 'bar'"):
        ev.plot(kind="line")
    with pytest.raises(KeyError, match="'err@3' is not a metric of this evaluation"):
        ev.plot(metrics=["err@3"])


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    y, qid, scores = _systems(n_queries=5)
    evs = {s: evaluate(y, scores[s], qid=qid, metrics=["p@1"]) for s in "AB"}
    report = compare(evs, n_resamples=50)
    for name in ("matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    with pytest.raises(ImportError, match=r'^Evaluation.plot\(\) needs matplotlib: '
                                          r'pip install "sklearn-rank\[plot\]"$'):
        evs["A"].plot()
    with pytest.raises(ImportError, match=r'Report.plot\(\) needs matplotlib: '
                                          r'pip install "sklearn-rank\[plot\]"'):
        report.plot()


# ---------------------------------------------------------------- Report.plot

def test_bars_are_the_per_query_differences(tmp_path):
    y, qid, scores = _systems()
    evs = {s: evaluate(y, scores[s], qid=qid, metrics=["ndcg@10", "map"]) for s in "ABC"}
    report = compare(evs, baseline="A", n_resamples=500)
    ax = report.plot(metric="map", system="B")
    _saved(ax, tmp_path / "differences.png")
    x, base, _ = paired_values(evs["B"], evs["A"], metric="map")
    heights = [bar.get_height() for bar in ax.containers[0]]
    assert heights == pytest.approx(sorted(x - base, reverse=True), rel=1e-12, abs=1e-15)
    assert report.differences["map"]["B"] == pytest.approx(x - base, rel=1e-12, abs=1e-15)
    c = next(c for c in report.comparisons if (c.metric, c.system) == ("map", "B"))
    mean_line = [line for line in ax.get_lines() if line.get_label().startswith("mean")]
    assert mean_line[0].get_ydata()[0] == pytest.approx(c.difference, rel=1e-12)
    band = ax.get_legend_handles_labels()[1]
    assert f"95% CI [{c.low:+.4f}, {c.high:+.4f}]" in band
    assert ax.get_title() == f"B vs A: {c.wins} wins / {c.losses} losses"
    assert ax.get_ylabel() == "map: B - A" and _integer_ticks(ax)
    # the default metric is the first, as on the command line
    assert report.plot(system="C").get_ylabel() == "ndcg@10: C - A"


def test_report_arguments_name_the_fix():
    y, qid, scores = _systems(n_queries=8)
    evs = {s: evaluate(y, scores[s], qid=qid, metrics=["ndcg@10"]) for s in "ABC"}
    report = compare(evs, baseline="A", n_resamples=50)
    with pytest.raises(ValueError, match=r"compares 2 systems with 'A' \('B', 'C'\); pass "
                                         r"system=\.\.\."):
        report.plot()
    with pytest.raises(ValueError, match="system 'A' is not a system compared"):
        report.plot(system="A")
    with pytest.raises(ValueError, match="metric 'map' is not a metric of this report"):
        report.plot(metric="map", system="B")
    # any spelling of the spec
    assert report.plot(metric=" ndcg @ 10", system="B").containers[0]


def test_a_sum_and_a_geometric_mean_draw_the_compared_quantity(tmp_path):
    from sklearn_rank.metrics._engine.aggregate import GEOMETRIC_FLOOR

    y, qid, scores = _systems()
    evs = {s: evaluate(y, scores[s], qid=qid, metrics=["gmap"]) for s in "AB"}
    report = compare(evs, n_resamples=200)
    ax = report.plot()
    x, base, _ = paired_values(evs["B"], evs["A"], metric="gmap")
    logs = np.log(np.maximum(x, GEOMETRIC_FLOOR)) - np.log(np.maximum(base, GEOMETRIC_FLOOR))
    assert [b.get_height() for b in ax.containers[0]] == pytest.approx(
        sorted(logs, reverse=True), rel=1e-12, abs=1e-15)
    assert "log(max(value, 1e-5))" in ax.get_ylabel()
    # weighted: w * value / mean(w) per query, whose mean is the report's difference
    w = np.repeat(np.arange(1.0, 41.0), 12)
    evs = {s: evaluate(y, scores[s], qid=qid, metrics=["map"], sample_weight=w) for s in "AB"}
    report = compare(evs, n_resamples=200)
    ax = report.plot()
    x, base, _ = paired_values(evs["B"], evs["A"], metric="map")
    scaled = (x - base) * np.arange(1.0, 41.0) / 20.5
    assert [b.get_height() for b in ax.containers[0]] == pytest.approx(
        sorted(scaled, reverse=True), rel=1e-12, abs=1e-15)
    mean = next(line for line in ax.get_lines() if line.get_label().startswith("mean"))
    assert report.comparisons[0].difference == pytest.approx(scaled.mean(), rel=1e-12)
    assert mean.get_ydata()[0] == pytest.approx(scaled.mean(), rel=1e-12)


def test_a_count_draws_its_mean_difference_per_query(tmp_path):
    files = _tied_files(tmp_path)
    evs = {s: evaluate_run(files["qrels"], files[s], ["num_rel_ret"]) for s in "ab"}
    report = compare(evs, n_resamples=200)
    c = report.comparisons[0]
    ax = report.plot()
    mean = next(line for line in ax.get_lines() if line.get_label().startswith("mean"))
    assert c.aggregate == "sum" and c.n_queries == 12
    assert mean.get_ydata()[0] == pytest.approx(c.difference / 12, rel=1e-12)
    assert mean.get_ydata()[0] == pytest.approx(
        np.mean([b.get_height() for b in ax.containers[0]]), rel=1e-12)


# ---------------------------------------------------------------- one implementation

def _tied_files(tmp_path, n_queries=12, seed=1):
    """qrels and two runs with many tied scores (trec_eval breaks ties by docno)."""
    rng = np.random.default_rng(seed)
    qrels, runs = [], {"a": [], "b": []}
    for q in range(n_queries):
        for d in range(10):
            qrels.append(f"q{q} 0 d{d} {rng.integers(0, 3)}")
        for name, run in runs.items():
            for d in range(10):
                run.append(f"q{q} Q0 d{d} 0 {rng.integers(0, 3)} {name}")
    paths = {}
    for name, lines in (("qrels", qrels), *runs.items()):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n")
    return {k: str(v) for k, v in paths.items()}


def _cli_axes(monkeypatch, argv):
    """The Axes the command line draws, recorded as its figure is saved."""
    drawn, savefig = [], Figure.savefig

    def record(figure, *args, **kwargs):
        drawn.extend(figure.axes)
        return savefig(figure, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    assert main(argv) == 0
    return drawn


def test_evaluate_plot_and_evaluation_plot_draw_the_same_lines(tmp_path, monkeypatch,
                                                              capsys):
    files = _tied_files(tmp_path)
    png = tmp_path / "cli.png"
    drawn = _cli_axes(monkeypatch, ["evaluate", files["qrels"], files["a"], "-m", "P.6",
                                    "-m", "ndcg_cut.4", "--plot", str(png)])
    assert png.read_bytes().startswith(PNG)
    ev = evaluate_run(files["qrels"], files["a"], ["P.1,2,3,4,5,6", "ndcg_cut.1,2,3,4"])
    for cli, family in zip(drawn, ("P", "ndcg_cut"), strict=True):
        ax = ev.plot(metrics=[m for m in ev.mean if m.startswith(family + "_")])
        (line,), (cli_line,) = ax.get_lines(), cli.get_lines()
        assert cli.get_ylabel() == ax.get_ylabel() == f"{family}@k"
        assert cli_line.get_xdata().tolist() == line.get_xdata().tolist()
        assert cli_line.get_ydata() == pytest.approx(line.get_ydata(), rel=1e-12)
    # at k = K the curve is the value the command line prints (trec_eval's, ties by docno)
    out = capsys.readouterr().out
    printed = {f.split()[0]: float(f.split()[1]) for f in out.splitlines()[2:4]}
    assert drawn[0].get_lines()[0].get_ydata()[-1] == pytest.approx(printed["P_6"], abs=5e-5)
    assert drawn[1].get_lines()[0].get_ydata()[-1] == pytest.approx(printed["ndcg_cut_4"],
                                                                    abs=5e-5)


def test_compare_plot_and_report_plot_draw_the_same_bars(tmp_path, monkeypatch):
    files = _tied_files(tmp_path)
    drawn = _cli_axes(monkeypatch, ["compare", files["qrels"], files["a"], files["b"], "-m",
                                    "map", "--resamples", "300", "--plot",
                                    str(tmp_path / "cli.png")])
    evs = {s: evaluate_run(files["qrels"], files[s], ["map"]) for s in "ab"}
    report = compare(evs, n_resamples=300, missing="zero")
    ax = report.plot()
    cli = next(a for a in drawn if a.containers)  # the bottom row's first panel
    assert [b.get_height() for b in cli.containers[0]] == pytest.approx(
        [b.get_height() for b in ax.containers[0]], rel=1e-12, abs=1e-15)
    assert cli.get_title() == ax.get_title()
    assert ([line.get_ydata()[0] for line in cli.get_lines()]
            == pytest.approx([line.get_ydata()[0] for line in ax.get_lines()], rel=1e-12))
