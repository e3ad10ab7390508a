"""Figures: metric@k curves and per-query differences to a baseline.

One implementation for ``sklearn-rank evaluate/compare --plot``
(:func:`save_figure`, one panel per family and per system) and for
``Evaluation.plot`` / ``Report.plot`` (:func:`plot_evaluation`,
:func:`plot_report`, on one Axes): both draw with :func:`draw_curves` and
:func:`draw_differences`.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import replace

import numpy as np

__all__ = ["at_k_families", "check_target", "draw_curves", "draw_differences", "family_label",
           "plot_evaluation", "plot_means", "plot_report", "pyplot", "save_figure"]

_MAX_POINTS = 100
_DEFAULT_FAMILIES = ("ndcg(gain='linear')@20", "p@20")
INSTALL = 'pip install "sklearn-rank[plot]"'
KINDS = ("auto", "curve", "bar")


def pyplot(what: str):
    """``matplotlib.pyplot``, or an ImportError saying that ``what`` needs it and how
    to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(f"{what} needs matplotlib: {INSTALL}") from None
    return plt


def _cli_pyplot():
    """pyplot on the Agg backend (the command line only writes files)."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(f"--plot needs matplotlib: {INSTALL}") from None
    matplotlib.use("Agg")
    return pyplot("--plot")


# ---------------------------------------------------------------- families of cut-offs

def family_label(spec, name: str | None = None) -> str:
    """The label of the metric@k family of ``spec`` (which has a cut-off):
    ``p@k`` for ``p@10``, ``P@k`` for trec_eval's ``P_10``, ``ndcg_cut@k``,
    ``nDCG@k`` for ir_measures' ``nDCG@10``; ``name``: the label the
    command line prints for ``spec`` (trec_eval's name under --format trec)."""
    text = str(spec)
    name = text if name is None else name
    if name != text or getattr(spec, "trec", None) is not None:
        return f"{name.rsplit('_', 1)[0]}@k"
    if getattr(spec, "label", None) is not None:
        return f"{name.rsplit('@', 1)[0]}@k"
    return f"{spec.with_options(k=None)}@k"


def at_cut_off(spec, k: int):
    """``spec`` at cut-off ``k``, in the vocabulary it was written in: trec_eval's
    ``P_10`` gives ``P_3`` (ties broken by document id, as trec_eval), ir_measures'
    ``nDCG@10`` gives ``nDCG@3`` (its provider's reading of the run), the
    registry's ``p@10`` gives ``p@3``; so the curve at k = K is the printed value."""
    trec, label = getattr(spec, "trec", None), getattr(spec, "label", None)
    if trec is not None and re.search(r"_\d+$", trec):
        return replace(spec, k=k, trec=re.sub(r"_\d+$", f"_{k}", trec))
    if label is not None and re.search(r"@\d+$", label):
        return replace(spec, k=k, label=re.sub(r"@\d+$", f"@{k}", label))
    return spec.with_options(k=k)


def at_k_families(specs, labels=None) -> list[tuple[str, list]]:
    """For every spec with a cut-off K, the same metric at k = 1..K (at most 100
    points); two default families when no spec has a cut-off.

    ``labels`` maps ``str(spec)`` to the label the command line prints (see
    ``sklearn_rank.cli._runs.result_labels``); a family is named after it: ``ndcg_cut@k`` for
    ``ndcg_cut_10``, ``ndcg(gain='linear', empty='one')@k`` for a spec printed
    canonically.
    """
    from .metrics._vocab.spec import parse_metric

    labels = labels or {}
    with_k = [s for s in specs if getattr(s, "k", None) is not None] or [
        parse_metric(s) for s in _DEFAULT_FAMILIES]
    families, seen = [], set()
    for spec in with_k:
        label = family_label(spec, labels.get(str(spec), str(spec)))
        key = (label, spec.name, spec.params)
        if key in seen:
            continue
        seen.add(key)
        top = min(spec.k, _MAX_POINTS)
        families.append((label, [at_cut_off(spec, j) for j in range(1, top + 1)]))
    return families


def evaluation_families(evaluation, keys) -> tuple[list, list]:
    """The metric@k families among ``keys`` of ``evaluation``:
    ``([(label, [k, ...], [key, ...]), ...], keys in no family of 2 cut-offs or more)``,
    cut-offs increasing."""
    specs = {str(m): m for m in evaluation.metrics}
    groups: dict = {}
    for key in keys:
        spec = specs.get(key)
        if getattr(spec, "k", None) is None:
            continue
        label = family_label(spec)
        group = groups.setdefault((label, spec.name, spec.params), (label, {}))
        group[1].setdefault(spec.k, key)
    families = [(label, sorted(by_k), [by_k[k] for k in sorted(by_k)])
                for label, by_k in groups.values() if len(by_k) > 1]
    drawn = {key for _, _, members in families for key in members}
    return families, [key for key in keys if key not in drawn]


# ---------------------------------------------------------------- drawing on one Axes

def draw_curves(ax, label: str, by_line: dict, ks=None) -> None:
    """A line per entry of ``by_line`` (legend name -> mean at each cut-off of
    ``ks``, default 1..K) over k, ``label`` the family's (``p@k``); k ticks at
    integers."""
    from matplotlib.ticker import MaxNLocator

    for name, values in by_line.items():
        x = np.arange(1, len(values) + 1) if ks is None else np.asarray(ks)
        ax.plot(x, values, marker="o" if len(x) <= 20 else None, ms=3, label=name)
    ax.set_xlabel("k")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # cut-offs: 1, 2, ...
    ax.set_ylabel(label)
    ax.set_title(f"{label}, mean over queries")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def draw_differences(ax, d, *, metric: str, system: str, baseline: str,
                     comparison=None) -> None:
    """The per-query differences ``d`` (system - baseline) as bars sorted from
    the largest, green above 0 and red below; with ``comparison`` (its
    :class:`~sklearn_rank.stats.Comparison`), the mean difference per query as
    a dashed line and its bootstrap interval as a band, and the wins and
    losses it counts in the title."""
    from matplotlib.ticker import MaxNLocator

    from ._utils.text import counted, percent

    d = np.sort(np.asarray(d, dtype=float))[::-1]
    ax.bar(np.arange(d.shape[0]), d, width=1.0, color=np.where(d >= 0, "tab:green", "tab:red"))
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("queries, sorted by difference")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ylabel = f"{metric}: {system} - {baseline}"
    if comparison is None:
        wins, losses = int((d > 1e-12).sum()), int((d < -1e-12).sum())
    else:
        c = comparison
        wins, losses = c.wins, c.losses
        n = c.n_queries if c.aggregate == "sum" else 1  # Δ of a sum: n x the mean
        ax.axhspan(c.low / n, c.high / n, color="tab:blue", alpha=0.15, lw=0, zorder=0.5,
                   label=f"{percent(c.confidence)} CI [{c.low / n:+.4f}, {c.high / n:+.4f}]")
        ax.axhline(c.difference / n, color="tab:blue", ls="--", lw=1.2,
                   label=f"mean {c.difference / n:+.4f}")
        ax.legend(fontsize=8, loc="upper right")
        if c.compared != "value":
            ylabel += f"\n(per query: {c.compared})"
    ax.set_ylabel(ylabel)
    ax.set_title(f"{system} vs {baseline}: {counted(wins, 'win')} / "
                 f"{counted(losses, 'loss', 'losses')}")
    ax.grid(alpha=0.3, axis="y")


def _new_axes(what: str, ax, size=(5, 3.8)):
    """``ax``, or the Axes of a new figure of ``size``."""
    if ax is not None:
        return ax
    return pyplot(what).subplots(figsize=size, layout="constrained")[1]


def plot_evaluation(evaluation, ax=None, metrics=None, kind="auto", label=None):
    """What ``Evaluation.plot`` draws (see there); returns the Axes."""
    pyplot("Evaluation.plot()")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS))}; got {kind!r}.")
    keys = _evaluation_keys(evaluation, metrics)
    families, alone = evaluation_families(evaluation, keys)
    if kind == "curve" and alone:
        raise ValueError(
            f"kind='curve' draws metrics at several cut-offs of one family (p@1, p@5, "
            f"p@10); {', '.join(map(repr, alone))} of this evaluation "
            f"{'has' if len(alone) == 1 else 'have'} no other cut-off here. Pass "
            "kind='bar', or metrics=[...] without "
            f"{'it' if len(alone) == 1 else 'them'}.")
    ax = _new_axes("Evaluation.plot()", ax)
    means = {key: float(dict.__getitem__(evaluation.mean, key)) for key in keys}
    if kind == "bar" or (kind == "auto" and alone):
        _draw_means(ax, means, label)
        return ax
    for family, ks, members in families:
        draw_curves(ax, family, {_curve_name(family, label, len(families)):
                                 [means[key] for key in members]}, ks)
    if len(families) > 1:
        ax.set_ylabel("mean over queries")
        ax.set_title(f"{', '.join(f for f, _, _ in families)}, mean over queries")
    return ax


def _curve_name(family: str, label, n_families: int) -> str:
    """A curve's legend entry: the family, or the user's ``label`` (with the family when
    several families are drawn)."""
    if label is None:
        return family
    return label if n_families == 1 else f"{label}: {family}"


def _evaluation_keys(evaluation, metrics) -> list:
    """The evaluation's keys of ``metrics`` (a spelling, a list of them, or None: all)."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if metrics is None:
        return list(dict.keys(evaluation.mean))
    for metric in metrics:
        evaluation.mean[metric]  # noqa: B018 - a KeyError listing the keys
    keys = list(dict.fromkeys(evaluation.mean.key_of(m) for m in metrics))
    if not keys:
        raise ValueError("metrics is empty; name the metrics to draw, or pass None "
                         "for all of them.")
    return keys


def _draw_means(ax, means: dict, label) -> None:
    """A bar per metric, its mean written on it."""
    bars = ax.bar(np.arange(len(means)), list(means.values()), tick_label=list(means),
                  label=label, color="tab:blue")
    ax.bar_label(bars, fmt="%.4f", fontsize=8)
    if len(means) > 4 or max(map(len, means)) > 10:
        ax.tick_params(axis="x", labelrotation=30)
        for text in ax.get_xticklabels():
            text.set_horizontalalignment("right")
    ax.set_ylabel("mean over queries")
    ax.set_title("mean over queries")
    ax.grid(alpha=0.3, axis="y")
    if label is not None:
        ax.legend(fontsize=8)


def plot_report(report, ax=None, metric=None, system=None, baseline=None):
    """What ``Report.plot`` draws (see there); returns the Axes."""
    pyplot("Report.plot()")
    metric = _report_metric(report, metric)
    system, baseline = _report_pair(report, system, baseline)
    if not report.differences:
        raise ValueError("This report holds no per-query differences (it was not made by "
                         "sklearn_rank.stats.compare); compare the evaluations to plot them.")
    comparison = next(c for c in report.comparisons
                      if c.metric == metric and c.system == system and c.baseline == baseline)
    key = system if report.baseline is not None else (system, baseline)
    ax = _new_axes("Report.plot()", ax)
    draw_differences(ax, report.differences[metric][key], metric=metric, system=system,
                     baseline=baseline, comparison=comparison)
    return ax


def _report_pair(report, system, baseline) -> tuple:
    """The (system, baseline) of a report that ``Report.plot`` draws: those given,
    checked, or the only system and its first baseline."""
    pairs = list(dict.fromkeys((c.system, c.baseline) for c in report.comparisons))
    others = list(dict.fromkeys(s for s, _ in pairs))
    if system is None:
        if len(others) > 1:
            raise ValueError(
                f"This report compares {len(others)} systems"
                f"{'' if report.baseline is None else f' with {report.baseline!r}'} "
                f"({', '.join(map(repr, others))}); pass system=... to draw one of them, "
                f"e.g. on Axes of their own: fig, axes = plt.subplots(1, {len(others)}); "
                f"for ax, s in zip(axes, {others!r}): report.plot(ax, system=s)")
        system = others[0]
    elif system not in others:
        raise ValueError(f"system {system!r} is not a system compared with "
                         f"{_against(report)}; the systems: {', '.join(map(repr, others))}.")
    bases = [b for s, b in pairs if s == system]
    if baseline is None:
        baseline = bases[0]
    elif baseline not in bases:
        raise ValueError(f"baseline {baseline!r}: {system!r} is compared with "
                         f"{', '.join(map(repr, bases))} only.")
    return system, baseline


def _against(report) -> str:
    """``the baseline 'A'``, or ``other systems`` for a report without a single one."""
    return "other systems" if report.baseline is None else f"the baseline {report.baseline!r}"


def plot_means(report, ax=None, metric=None, confidence=0.95):
    """What ``Report.plot_means`` draws (see there); returns the Axes."""
    from ._utils.text import percent

    pyplot("Report.plot_means()")
    metric = _report_metric(report, metric)
    if metric not in report.tukey:
        raise ValueError(
            f"This report's test is {report.test!r}, which gives no simultaneous intervals; "
            "compare the systems with test='tukey' or test='randomized_tukey' to draw the "
            "means with Tukey's intervals (report.plot() draws the per-query differences).")
    result = report.tukey[metric]
    low, high = result.simultaneous_intervals(confidence)
    order = np.argsort(result.means, kind="stable")  # the best on top
    best = int(order[-1])
    differ = result.pvalue[best] < 1 - confidence
    colors = np.where(differ, "tab:gray", "tab:blue")[order]
    y = np.arange(order.shape[0])
    means = result.means[order]
    ax = _new_axes("Report.plot_means()", ax, size=(5, 1.2 + 0.45 * order.shape[0]))
    ax.hlines(y, low[order], high[order], colors=colors, lw=2)
    ax.scatter(means, y, c=colors, zorder=3)
    ax.set_yticks(y, [result.systems[i] for i in order])
    ax.set_xlabel(f"{metric}: mean over {result.n_queries} queries (compared scale)")
    name = "randomized Tukey HSD" if result.method == "randomized_tukey" else "Tukey HSD"
    ax.set_title(f"{metric}: {percent(confidence)} simultaneous intervals\n({name}; grey: "
                 "differs from the best)", fontsize=9)
    ax.grid(alpha=0.3, axis="x")
    return ax


def _report_metric(report, metric) -> str:
    """The report's key of ``metric`` (any spelling of a spec); the first by default."""
    if metric is None:
        return report.metrics[0]
    if metric in report.metrics:
        return metric
    from .metrics._vocab.spec import parse

    try:
        text = str(parse(metric))
    except (TypeError, ValueError):
        text = None
    if text not in report.metrics:
        raise ValueError(f"metric {metric!r} is not a metric of this report; its metrics: "
                         f"{', '.join(map(repr, report.metrics))}.")
    return text


# ---------------------------------------------------------------- the command line's file

def check_target(path) -> None:
    """Raise before any work if a figure cannot be written to ``path``:
    matplotlib missing, a directory, a missing parent directory, an unknown
    extension."""
    _cli_pyplot()
    from matplotlib.backend_bases import FigureCanvasBase

    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(errno.ENOENT, f"no directory {parent}", path)
    if not os.access(parent, os.W_OK):
        raise PermissionError(errno.EACCES, f"cannot write in {parent}", path)
    formats = FigureCanvasBase.get_supported_filetypes()
    if _format(path) not in formats:
        raise ValueError(f"unknown image format {_format(path)!r}: name a file ending in "
                         f".{', .'.join(sorted(formats))}")


def _format(path) -> str:
    """The image format of ``path``: its extension, PNG without one."""
    return os.path.splitext(str(path))[1][1:].lower() or "png"


def save_figure(path, curves, differences=None, baseline=None, comparisons=None):
    """Write a PNG: one panel per metric family (a line per run over k), and,
    when ``differences`` is given, one panel per system of its sorted per-query
    differences to the baseline.

    ``curves``: list of (family label, {run: [value at k = 1..K]}).
    ``differences``: (metric, {system: per-query differences}).
    ``comparisons``: {system: Comparison of that metric}, for the mean
    difference, its interval and the counts (see :func:`draw_differences`).
    """
    plt = _cli_pyplot()
    n_top = len(curves)
    n_bottom = 0 if differences is None else len(differences[1])
    columns = max(n_top, n_bottom, 1)
    rows = 1 if differences is None else 2
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.8 * rows), squeeze=False)
    try:
        for ax, (label, by_run) in zip(axes[0], curves, strict=False):
            draw_curves(ax, label, by_run)
        for ax in axes[0][n_top:]:
            ax.axis("off")
        if differences is not None:
            metric, by_system = differences
            for ax, (system, d) in zip(axes[1], by_system.items(), strict=False):
                draw_differences(ax, d, metric=metric, system=system, baseline=baseline,
                                 comparison=(comparisons or {}).get(system))
            for ax in axes[1][n_bottom:]:
                ax.axis("off")
        fig.tight_layout()
        fig.savefig(path, dpi=100, format=_format(path))  # no extension: PNG, that name
    finally:
        plt.close(fig)
