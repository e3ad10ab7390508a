"""Comparisons per query segment, and the queries where a system loses most."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from numbers import Integral

import numpy as np

from .._utils.text import counted, p_text
from .._utils.validation import Interval, StrOptions, validate_params
from ..metrics._evaluation import Evaluation
from ._compare import compare
from ._constraints import LEVEL, PAIRED, RESAMPLES, SEED
from ._corrections import CORRECTIONS, adjust, label
from ._escape import latex_cell, latex_comment, latex_row, markdown_cell
from ._folds import folded
from ._pairing import paired_values
from ._tests import APPROXIMATIONS

__all__ = ["SegmentReport", "WorstQueries", "compare_segments", "segment_of",
           "worst_queries"]


# ---------------------------------------------------------------- worst queries


@dataclass(frozen=True)
class WorstQueries:
    """The queries where a system loses most to a baseline (:func:`worst_queries`).

    Attributes
    ----------
    system, baseline, metric : str
    qids : ndarray of shape (n,)
        The query ids, from the largest loss.
    values, baseline_values : ndarray of shape (n,)
        The system's and the baseline's per-query values there.
    differences : ndarray of shape (n,)
        ``values - baseline_values``, all negative, ascending.
    n_losses : int
        Queries the system loses in all (``n`` is at most ``k`` of them).
    n_queries : int
        Paired queries.
    """

    system: str
    baseline: str
    metric: str
    qids: np.ndarray
    values: np.ndarray
    baseline_values: np.ndarray
    differences: np.ndarray
    n_losses: int
    n_queries: int

    def _rows(self) -> list[list[str]]:
        return [[str(q), f"{v:.4f}", f"{b:.4f}", f"{d:+.4f}"] for q, v, b, d in
                zip(self.qids.tolist(), self.values, self.baseline_values,
                    self.differences, strict=True)]

    def _title(self) -> str:
        if not self.n_losses:
            return (f"{self.metric}: {self.system} loses to {self.baseline} on no query (of "
                    f"{self.n_queries} paired)")
        return (f"{self.metric}: the {counted(len(self.qids), 'query', 'queries')} where "
                f"{self.system} loses most to {self.baseline} (of {self.n_losses} lost, "
                f"{self.n_queries} paired)")

    def _header(self) -> list[str]:
        return ["query", self.system, self.baseline, "Δ"]

    def __str__(self) -> str:
        if not self.n_losses:
            return self._title()
        return "\n".join([self._title(), *_text_table(self._header(), self._rows())])

    def to_markdown(self) -> str:
        """The title and the table in GitHub-flavoured Markdown."""
        if not self.n_losses:
            return markdown_cell(self._title())
        return f"{markdown_cell(self._title())}\n\n{_markdown_table(self._header(), self._rows())}"

    def to_latex(self) -> str:
        """The table as a LaTeX ``tabular``, the title as a ``%`` comment."""
        if not self.n_losses:
            return latex_comment(self._title())
        return f"{latex_comment(self._title())}\n{_latex_table(self._header(), self._rows())}"

    def to_frame(self):
        """One row per query (requires pandas): ``query``, the two values, ``difference``."""
        import pandas as pd

        return pd.DataFrame({"query": self.qids, self.system: self.values,
                             self.baseline: self.baseline_values,
                             "difference": self.differences})


@validate_params({
    "system": PAIRED["a"], "baseline": PAIRED["b"], "metric": PAIRED["metric"],
    "k": [Interval(Integral, 1, None, closed="left")], "missing": PAIRED["missing"],
    "names": [tuple, None],
})
def worst_queries(system, baseline, *, metric=None, k=10, missing="raise",
                  names=None) -> WorstQueries:
    """The ``k`` queries where ``system`` loses most to ``baseline``, with their values.

    Parameters
    ----------
    system, baseline : array-like of shape (n_queries,) or Evaluation
        Per-query values, paired by query id (see
        :func:`~sklearn_rank.stats.paired_values`); arrays pair by position,
        and the positions stand for the query ids.
    metric : str, default=None
        The metric of the Evaluations (needed when they hold several).
    k : int, default=10
        At most this many queries; fewer when the system loses fewer.
    missing : {'raise', 'drop', 'zero'}, default='raise'
        Queries missing from one side: see :func:`paired_values`.
    names : tuple of (str, str), default=None
        The names of the system and the baseline in the printed table
        (``("B", "A")`` by default).

    Returns
    -------
    worst : WorstQueries
        The query ids from the largest loss, both values and the differences
        (system - baseline, all < 0; queries of the same loss in their
        paired order); ``str()`` prints them as a table, ``to_frame()``.

    Examples
    --------
    >>> from sklearn_rank.stats import worst_queries
    >>> w = worst_queries([0.2, 0.9, 0.5, 0.4], [0.6, 0.8, 0.5, 0.7], k=3)
    >>> w.qids.tolist(), [round(float(d), 2) for d in w.differences]
    ([0, 3], [-0.4, -0.3])
    """
    name, base = names or ("B", "A")
    if metric is None and isinstance(system, Evaluation) and len(system.metrics) == 1:
        metric_name = str(system.metrics[0])
    else:
        metric_name = metric or "value"
    x, y, qids = paired_values(system, baseline, metric=metric, missing=missing)
    d = x - y
    if qids is None:  # arrays, paired by position: the positions
        qids = np.arange(d.shape[0])
    order = np.argsort(d, kind="stable")
    losses = int((d < 0).sum())
    top = order[:min(k, losses)]
    return WorstQueries(str(name), str(base), metric_name, qids[top], x[top],
                        y[top], d[top], losses, int(d.shape[0]))


# ---------------------------------------------------------------- segments


def segment_of(segments, qids: np.ndarray, where: str) -> np.ndarray:
    """The segment of each of ``qids`` (an object array), from a mapping
    ``qid -> segment`` or a pandas Series indexed by query id; an error naming
    the first query without one."""
    if hasattr(segments, "index") and hasattr(segments, "to_dict"):  # a pandas Series
        segments = segments.to_dict()
    out = np.empty(qids.shape[0], dtype=object)
    for i, q in enumerate(qids.tolist()):
        try:
            out[i] = segments[q]
        except KeyError:
            keys = list(segments)[:3]
            raise ValueError(
                f"segments: query {q!r} ({type(q).__name__}) of {where} has no segment. "
                f"Map every query to a segment (e.g. the others to 'other'); query ids "
                f"match by Python equality (segments' keys: "
                f"{', '.join(f'{k!r} ({type(k).__name__})' for k in keys)}, ...).") from None
        except TypeError:
            raise ValueError(f"segments: query {q!r} of {where} cannot be looked up "
                             f"({type(q).__name__} ids)") from None
    return out


def _subset(ev: Evaluation, mask: np.ndarray) -> Evaluation:
    """The evaluation of the queries of ``mask`` (its means: the plain means of
    those queries; compare() summarises by each metric's own rule anyway).
    A shallow copy, so that its metrics keep their other spellings."""
    sub = copy.copy(ev)
    sub.qids = ev.qids[mask]
    sub.per_query, sub.mean = copy.copy(ev.per_query), copy.copy(ev.mean)
    for key, values in ev.per_query.items():
        sub.per_query[key] = values[mask]
        with np.errstate(invalid="ignore"):
            sub.mean[key] = float(np.nanmean(values[mask])) \
                if np.any(~np.isnan(values[mask])) else float("nan")
    sub.weights = None if ev.weights is None else ev.weights[mask]
    sub.lengths = None if ev.lengths is None else ev.lengths[mask]
    return sub


class SegmentReport:
    """Systems compared with a baseline overall and per query segment
    (:func:`compare_segments`).

    Attributes
    ----------
    overall : Report
        :func:`compare` over all queries (its own correction, as alone).
    segments : list
        The segment labels, sorted (by their text).
    reports : dict of segment -> Report
        :func:`compare` over each segment's queries, with ``pvalue_corrected``
        and ``significant`` corrected across every (segment, system, metric).
    sizes : dict of segment -> int
        Paired queries of each segment.
    correction : str or None
    worst : list of WorstQueries
        For every comparison of ``overall``, the queries where the system
        loses most to the other (empty when ``worst=None``).
    """

    def __init__(self, overall, segments, reports, sizes, correction, worst):
        self.overall = overall
        self.segments = segments
        self.reports = reports
        self.sizes = sizes
        self.correction = correction
        self.worst = worst

    def _header(self) -> list[str]:
        name = label(self.correction)
        return ["segment", "queries", "metric", "system", "vs", "mean", "mean vs", "Δ", "CI",
                f"p ({name})" if name else "p", "W/T/L"]

    def _rows(self) -> list[list[str]]:
        rows = []
        for segment in self.segments:
            report = self.reports[segment]
            for c in report.comparisons:
                rows.append([str(segment), str(c.n_queries), c.metric, c.system, c.baseline,
                             f"{c.mean:.4f}", f"{c.baseline_mean:.4f}",
                             f"{c.difference:+.4f}",
                             f"[{c.low:+.4f}, {c.high:+.4f}]",
                             p_text(c.pvalue_corrected) + (" *" if c.significant else ""),
                             f"{c.wins}/{c.ties}/{c.losses}"])
        return rows

    def _note(self) -> str:
        comparisons = sum(len(r.comparisons) for r in self.reports.values())
        after = (f"corrected by {label(self.correction)} across the {comparisons} "
                 "(segment, system, metric) comparisons" if self.correction else
                 "not corrected")
        return (f"Per segment ({len(self.segments)} segments): p {after}; "
                f"* p < {self.overall.alpha:g}; CI: bootstrap percentile interval, not "
                "corrected")

    def __str__(self) -> str:
        parts = [str(self.overall), "", self._note(),
                 *_text_table(self._header(), self._rows())]
        for worst in self.worst:
            parts += ["", str(worst)]
        return "\n".join(parts)

    def to_markdown(self) -> str:
        """The overall report, the segment table and the worst queries in Markdown."""
        parts = [self.overall.to_markdown(), markdown_cell(self._note()),
                 _markdown_table(self._header(), self._rows())]
        parts += [w.to_markdown() for w in self.worst]
        return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"

    def to_latex(self) -> str:
        """The overall table, the segment table and the worst queries as LaTeX tabulars."""
        parts = [self.overall.to_latex(), latex_comment(self._note()),
                 _latex_table(self._header(), self._rows())]
        parts += [w.to_latex() for w in self.worst]
        return "\n".join(p.rstrip("\n") for p in parts) + "\n"

    def to_frame(self):
        """One row per (segment, system, metric), as a pandas DataFrame (requires pandas)."""
        import pandas as pd

        frames, index = [], []
        for segment in self.segments:
            frame = self.reports[segment].to_frame()
            index = ["segment", *frame.index.names]
            frame = frame.reset_index()
            frame.insert(0, "segment", segment)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True).set_index(index)

    def __repr__(self) -> str:
        return f"SegmentReport(segments={self.segments!r}, overall={self.overall!r})"


@validate_params({
    "evaluations": [Mapping],
    "segments": [Mapping, "array-like"],  # a pandas Series is array-like
    "baseline": [str, list, tuple, None],
    "metrics": ["array-like", None],
    "test": [StrOptions({"randomization", "ttest", "wilcoxon"})],
    "correction": [StrOptions(set(CORRECTIONS)), None],
    "alpha": LEVEL,
    "confidence": LEVEL,
    "n_resamples": RESAMPLES,
    "missing": PAIRED["missing"],
    "random_state": SEED,
    "approximation": [StrOptions(APPROXIMATIONS)],
    "worst": [Interval(Integral, 1, None, closed="left"), None],
})
def compare_segments(evaluations: dict, segments, *, baseline=None, metrics=None,
                     test="randomization", correction="holm", alpha=0.05, confidence=0.95,
                     n_resamples=10000, missing="raise", random_state=0,
                     approximation="auto", worst=None) -> SegmentReport:
    """Compare systems with a baseline overall and within each query segment.

    Parameters
    ----------
    evaluations : dict of str -> Evaluation (or its folds)
        As for :func:`compare`.
    segments : mapping of query id -> segment, or pandas Series
        The segment of every query (a Series indexed by query id, e.g. a
        frame's column ``frame.set_index("qid")["segment"]``). Ids match the
        evaluations' by Python equality (``7`` is not ``"7"``); with folds,
        the ids are ``(fold, query id)`` pairs, as :func:`compare` keys them.
    baseline, metrics, test, alpha, confidence, n_resamples, missing, random_state, approximation
        As for :func:`compare`; each segment is compared with the same
        settings and seed, so its p-values and intervals are those of
        :func:`compare` on that segment's queries.
    correction : {'holm', 'bonferroni', 'fdr_bh'} or None, default='holm'
        Correction across every (segment, system, metric) comparison of the
        segment table; the overall report is corrected on its own, as
        :func:`compare` corrects it.
    worst : int, default=None
        For every comparison of the overall report (a system against its
        baseline, or a pair), list the ``worst`` queries where the system
        loses most (:func:`worst_queries`, over all queries).

    Returns
    -------
    report : SegmentReport
        ``overall`` (a :class:`Report`), ``reports`` per segment, ``worst``;
        ``str()``, ``to_markdown()``, ``to_latex()``, ``to_frame()``.

    Raises
    ------
    ValueError
        When a query of an evaluation has no segment (the message names it),
        and as :func:`compare` for each segment (the message names the
        segment).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rank.metrics import evaluate
    >>> from sklearn_rank.stats import compare_segments
    >>> rng = np.random.default_rng(0)
    >>> qid = np.repeat(np.arange(60), 10)
    >>> y = rng.integers(0, 3, qid.shape[0])
    >>> a = evaluate(y, y + rng.normal(0, 2.0, y.shape), qid=qid, metrics=["ndcg@5"])
    >>> b = evaluate(y, y + rng.normal(0, 0.5, y.shape), qid=qid, metrics=["ndcg@5"])
    >>> segments = {q: "head" if q < 20 else "tail" for q in range(60)}
    >>> report = compare_segments({"A": a, "B": b}, segments, n_resamples=1000, worst=3)
    >>> report.segments, [report.sizes[s] for s in report.segments]
    (['head', 'tail'], [20, 40])
    >>> len(report.worst[0].qids) <= 3
    True
    """
    if not isinstance(segments, Mapping) and not (hasattr(segments, "index")
                                                  and hasattr(segments, "to_dict")):
        raise TypeError(f"segments must be a mapping query id -> segment or a pandas "
                        f"Series indexed by query id; got {type(segments).__name__}.")
    evaluations = folded(evaluations)
    settings = dict(baseline=baseline, metrics=metrics, test=test, alpha=alpha,
                    confidence=confidence, n_resamples=n_resamples, missing=missing,
                    random_state=random_state, approximation=approximation)
    overall = compare(evaluations, correction=correction, **settings)
    labels = {name: segment_of(segments, np.asarray(ev.qids), f"evaluations[{name!r}]")
              for name, ev in evaluations.items()}
    present = {s for values in labels.values() for s in values.tolist()}
    order = sorted(present, key=lambda s: (str(s), repr(s)))
    reports, sizes = {}, {}
    for segment in order:
        subset = {name: _subset(ev, _is(labels[name], segment))
                  for name, ev in evaluations.items()}
        try:
            reports[segment] = compare(subset, correction=None, **settings)
        except ValueError as exc:
            raise ValueError(f"segment {segment!r}: {exc} (missing={missing!r}: each "
                             "segment compares the queries of that segment)") from None
        sizes[segment] = next((c.n_queries for c in reports[segment].comparisons),
                              int(next(iter(subset.values())).qids.shape[0]))
    _correct(reports, order, correction, alpha)
    lists = [] if worst is None else [
        worst_queries(evaluations[c.system], evaluations[c.baseline], metric=c.metric,
                      k=worst, missing=missing, names=(c.system, c.baseline))
        for c in overall.comparisons]
    return SegmentReport(overall, order, reports, sizes, correction, lists)


def _correct(reports: dict, order: list, correction, alpha: float) -> None:
    """Correct the p-values of every segment's comparisons as one family, in place
    (each report a copy with its comparisons replaced)."""
    raw = np.asarray([c.pvalue for s in order for c in reports[s].comparisons])
    adjusted = adjust(raw, correction).tolist()
    for segment in order:
        report = copy.copy(reports[segment])
        report.correction = correction
        report.comparisons = [replace(c, pvalue_corrected=float(p), significant=bool(p < alpha))
                              for c, p in zip(report.comparisons, adjusted, strict=False)]
        del adjusted[:len(report.comparisons)]
        reports[segment] = report


def _is(labels: np.ndarray, segment) -> np.ndarray:
    return np.fromiter((s == segment for s in labels.tolist()), dtype=bool,
                       count=labels.shape[0])


# ---------------------------------------------------------------- tables


def _text_table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(header[j]), *(len(r[j]) for r in rows)) if rows else len(header[j])
              for j in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    return lines + ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                    for r in rows]


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(markdown_cell(c) for c in r) + " |" for r in [header, *rows]]
    lines.insert(1, "|" + "|".join(["---"] * len(header)) + "|")
    return "\n".join(lines)


def _latex_table(header: list[str], rows: list[list[str]]) -> str:
    lines = [r"\begin{tabular}{" + "l" * len(header) + "}", r"\toprule",
             latex_row(latex_cell(c) for c in header), r"\midrule"]
    lines += [latex_row(latex_cell(c) for c in r) for r in rows]
    return "\n".join([*lines, r"\bottomrule", r"\end{tabular}"])
