"""Figures for the command line: metric@k curves and per-query differences."""

from __future__ import annotations

import errno
import os

import numpy as np

__all__ = ["at_k_families", "check_target", "save_figure"]

_MAX_POINTS = 100
_DEFAULT_FAMILIES = ("ndcg(gain='linear')@20", "p@20")


def at_k_families(specs, labels=None) -> list[tuple[str, list]]:
    """For every spec with a cut-off K, the same metric at k = 1..K (at most 100
    points); two default families when no spec has a cut-off.

    ``labels`` maps ``str(spec)`` to the label the command line prints (see
    ``_evaluate_cmd._labels``); a family is named after it: ``ndcg_cut@k`` for
    ``ndcg_cut_10``, ``ndcg(gain='linear', empty='one')@k`` for a spec printed
    canonically.
    """
    from .metrics import parse_metric

    labels = labels or {}
    with_k = [s for s in specs if s.k is not None] or [parse_metric(s)
                                                      for s in _DEFAULT_FAMILIES]
    families, seen = [], set()
    for spec in with_k:
        key = (spec.name, spec.params)
        if key in seen:
            continue
        seen.add(key)
        top = min(spec.k, _MAX_POINTS)
        name = labels.get(str(spec), str(spec))
        trec = getattr(spec, "trec", None) is not None  # keyed by trec_eval's name
        label = (name.rsplit("_", 1)[0] if name != str(spec) or trec
                 else str(spec.with_options(k=None)))
        families.append((f"{label}@k", [spec.with_options(k=j) for j in range(1, top + 1)]))
    return families


def check_target(path) -> None:
    """Raise before any work if a figure cannot be written to ``path``:
    matplotlib missing, a directory, a missing parent directory, an unknown
    extension."""
    _pyplot()
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


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "--plot needs matplotlib: pip install 'sklearn-rank[plot]'") from None
    return plt


def save_figure(path, curves, differences=None, baseline=None):
    """Write a PNG: one panel per metric family (a line per run over k), and,
    when ``differences`` is given, one panel per system of its sorted per-query
    differences to the baseline.

    ``curves``: list of (family label, {run: [value at k = 1..K]}).
    ``differences``: (metric, {system: per-query differences}).
    """
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    n_top = len(curves)
    n_bottom = 0 if differences is None else len(differences[1])
    columns = max(n_top, n_bottom, 1)
    rows = 1 if differences is None else 2
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.8 * rows), squeeze=False)
    try:
        for ax, (label, by_run) in zip(axes[0], curves, strict=False):
            for run, values in by_run.items():
                ks = np.arange(1, len(values) + 1)
                ax.plot(ks, values, marker="o" if len(ks) <= 20 else None, ms=3, label=run)
            ax.set_xlabel("k")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # cut-offs: 1, 2, ...
            ax.set_ylabel(label)
            ax.set_title(f"{label}, mean over queries")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        for ax in axes[0][n_top:]:
            ax.axis("off")
        if differences is not None:
            from .stats._comparison import counted

            metric, by_system = differences
            for ax, (system, d) in zip(axes[1], by_system.items(), strict=False):
                d = np.sort(np.asarray(d))[::-1]
                x = np.arange(d.shape[0])
                ax.bar(x, d, width=1.0, color=np.where(d >= 0, "tab:green", "tab:red"))
                ax.axhline(0, color="black", lw=0.8)
                ax.set_xlabel("queries, sorted by difference")
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                ax.set_ylabel(f"{metric}: {system} - {baseline}")
                wins, losses = int((d > 1e-12).sum()), int((d < -1e-12).sum())
                ax.set_title(f"{system} vs {baseline}: {counted(wins, 'win')} / "
                             f"{counted(losses, 'loss', 'losses')}")
                ax.grid(alpha=0.3, axis="y")
            for ax in axes[1][n_bottom:]:
                ax.axis("off")
        fig.tight_layout()
        fig.savefig(path, dpi=100, format=_format(path))  # no extension: PNG, that name
    finally:
        plt.close(fig)
