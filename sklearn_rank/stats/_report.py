"""The :class:`Report` of :func:`~sklearn_rank.stats.compare`: its table, notes and exports."""

from __future__ import annotations

from .._utils.text import counted, p_text, percent
from ._comparison import TESTS, p_label
from ._escape import latex_cell, latex_comment, latex_pvalue, latex_row, markdown_cell
from ._power import detectable_line
from ._scale import scale_note

__all__ = ["APPROXIMATED", "Report"]

#: The end of a report's note when a comparison took the normal approximation
#: (``compare(approximation=...)``).
APPROXIMATED = ("; from 50,000 queries the CI is the normal approximation of the "
                "bootstrap with its skewness term, and the randomization test's p-value "
                "(where 50,000 queries differ) that of the sign flips with its Edgeworth "
                "term (compare(approximation='none') resamples)")


class Report:
    """Systems compared with a baseline, with several, or in every pair: the result
    of :func:`compare`.

    Attributes
    ----------
    means : dict of system -> dict of metric -> float
        The summary of every system on every metric over the compared queries,
        by the metric's own rule (that of ``Evaluation.mean``): the (weighted)
        mean; the geometric mean for ``gmap`` and ``gm_bpref``; the sum for
        trec_eval's counts (``num_rel_ret``, ...).
    comparisons : list of Comparison
        One per (pair of systems, metric): each system other than the baseline
        against it, or each pair of systems (``compare(baseline=None)``).
    baseline : str or None
        The baseline, when there is one; None when systems are compared with
        several baselines, or in every pair.
    baselines : list of str
        The systems other systems are compared with.
    test, correction : str
    alpha, confidence : float
    aggregates : dict of metric -> {'mean', 'geometric', 'sum'}
        How each metric is summarised.
    weighted : bool
        Whether the evaluations weigh their queries (``sample_weight``).
    differences : dict of metric -> dict of system -> ndarray of shape (n_queries,)
        Per query, the system's compared quantity minus the baseline's (the
        value; ``log(max(value, 1e-5))`` for a geometric mean; ``w * value /
        mean(w)`` for a weighted one: see :class:`Comparison`), in the order
        of the paired query ids; their mean is the comparison's ``difference``
        (for a sum, ``difference / n_queries``). What :meth:`plot` draws.
        Keyed by ``(system, baseline)`` when the report has no single baseline.
    tukey : dict of metric -> TukeyResult
        For ``test='tukey'`` or ``'randomized_tukey'``: the test of every pair
        of systems on each metric, whose simultaneous intervals
        :meth:`plot_means` draws; empty for the other tests.
    approximated : bool
        Whether an interval (or a randomization p-value) of the report is the
        normal approximation of its resampling distribution (from 50,000
        queries under ``compare(approximation='auto')``); the note says so.
    """

    def __init__(self, means, comparisons, baseline, test, correction, alpha, confidence,
                 aggregates=None, weighted=False, differences=None, *, baselines=None,
                 tukey=None, approximated=False):
        self.means = means
        self.comparisons = comparisons
        self.baseline = baseline
        self.test = test
        self.correction = correction
        self.alpha = alpha
        self.confidence = confidence
        self.aggregates = dict(aggregates or {})
        self.weighted = weighted
        self.differences = dict(differences or {})
        self.baselines = list(baselines) if baselines is not None else [baseline]
        self.tukey = dict(tukey or {})
        self.approximated = approximated

    @property
    def metrics(self) -> list[str]:
        return list(next(iter(self.means.values())))

    @property
    def systems(self) -> list[str]:
        return list(self.means)

    def _rows(self):
        """(metric, system[, vs], mean, Δ, CI, p, W/T/L, d) cells in print order: a
        system's row per system it is compared with (the column ``vs`` when the
        report has no single baseline), or a row saying it is a baseline."""
        by_key = {}
        for c in self.comparisons:
            by_key.setdefault((c.metric, c.system), []).append(c)
        vs = [] if self.baseline is not None else [""]
        for metric in self.metrics:
            for system in self.systems:
                mean = f"{self.means[system][metric]:.4f}"
                found = by_key.get((metric, system), [])
                if not found:
                    yield [metric, system, *vs, mean, "baseline", "", "", "", ""]
                for c in found:
                    mark = " *" if c.significant else ""
                    yield [metric, system, *([c.baseline] if vs else []), mean,
                           f"{c.difference:+.4f}", f"[{c.low:+.4f}, {c.high:+.4f}]",
                           p_text(c.pvalue_corrected) + mark, f"{c.wins}/{c.ties}/{c.losses}",
                           f"{c.effect_size:+.2f}"]

    def _header(self) -> list[str]:
        name = p_label(self.test, self.correction)
        against = ["Δ"] if self.baseline is None else [f"Δ vs {self.baseline}"]
        return ["metric", "system", *(["vs"] if self.baseline is None else []), "mean",
                *against, f"{percent(self.confidence)} CI", f"p ({name})" if name else "p",
                "W/T/L", "d"]

    def _text_columns(self) -> int:
        """How many columns of the table hold text (left-aligned): metric, system, vs."""
        return 2 if self.baseline is not None else 3

    def _note(self) -> str:
        n = self.comparisons[0].n_queries if self.comparisons else 0
        after = {None: "", "holm": " after Holm's correction",
                 "bonferroni": " after Bonferroni's correction",
                 "fdr_bh": (" after Benjamini-Hochberg's correction (false discovery rate "
                            f"{self.alpha:g})")}[self.correction]
        if self.test in ("tukey", "randomized_tukey"):
            after = (" (simultaneous over the pairs of systems)" if len(self.metrics) == 1
                     else f" (simultaneous over the pairs of systems){after} over the metrics")
        queries = counted(n, "query", "queries")
        against = "the baseline" if self.baseline is not None else "the system in column vs"
        return (f"{queries}; {TESTS[self.test]}; * p < {self.alpha:g}{after}; CI: bootstrap "
                "percentile interval of the mean difference, not corrected for multiple "
                "comparisons (the verdict is the test's; a sentence below says why when they "
                f"disagree); W/T/L: queries won, tied, lost against {against}; d: mean "
                "difference / its standard deviation (Cohen's d for paired data)"
                f"{APPROXIMATED if self.approximated else ''}")

    def _scale_notes(self) -> list[str]:
        """A line per metric whose columns are not plain means: what they hold."""
        lines = []
        for metric in self.metrics:
            n = next((c.n_queries for c in self.comparisons if c.metric == metric), None)
            line = scale_note(metric, self.aggregates.get(metric, "mean"), self.weighted, n)
            if line is not None:
                lines.append(line)
        return lines

    def __str__(self) -> str:
        rows = list(self._rows())
        header = self._header()
        widths = [max(len(header[j]), *(len(r[j]) for r in rows)) for j in range(len(header))]
        lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                  for r in rows]
        lines += ["", self._note(), *self._scale_notes(), ""]
        lines += [c.sentence(self.correction) for c in self.comparisons]
        detectable = [line for c in self.comparisons if not c.significant
                      and (line := detectable_line(
                          c, self.differences.get(c.metric, {}).get(c.system)))]
        return "\n".join(lines + (["", *detectable] if detectable else []))

    def relabel(self, names: dict) -> Report:
        """A copy with metrics renamed (e.g. to trec_eval's names); others kept."""
        from dataclasses import replace

        means = {system: {names.get(m, m): v for m, v in by_metric.items()}
                 for system, by_metric in self.means.items()}
        comparisons = [replace(c, metric=names.get(c.metric, c.metric))
                       for c in self.comparisons]
        aggregates = {names.get(m, m): a for m, a in self.aggregates.items()}
        differences = {names.get(m, m): d for m, d in self.differences.items()}
        tukey = {names.get(m, m): t for m, t in self.tukey.items()}
        return Report(means, comparisons, self.baseline, self.test, self.correction,
                      self.alpha, self.confidence, aggregates, self.weighted, differences,
                      baselines=self.baselines, tukey=tukey, approximated=self.approximated)

    def __repr__(self) -> str:
        against = (f"baseline={self.baseline!r}" if self.baseline is not None
                   else f"baselines={self.baselines}")
        return (f"Report(systems={self.systems}, metrics={self.metrics}, "
                f"{against}, test={self.test!r})")

    def plot(self, ax=None, *, metric: str | None = None, system: str | None = None,
             baseline: str | None = None):
        """Draw a system's per-query differences to the baseline, as
        ``sklearn-rank compare --plot`` does.

        The differences (:attr:`differences`) as bars sorted from the largest,
        green where the system wins and red where it loses, with the mean
        difference per query (dashed) and its bootstrap interval (band); the
        title counts wins and losses. Needs matplotlib
        (``pip install "sklearn-rank[plot]"``).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The Axes to draw on; None: those of a new figure.
        metric : str, default=None
            The metric (any spelling of a spec the report holds); by default the
            first, as the command line draws.
        system : str, default=None
            The system to draw against the baseline; may be None when the
            report compares one system only.
        baseline : str, default=None
            The system ``system`` is compared with, for a report of several
            baselines or of every pair (by default the first it is compared
            with).

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")  # draw into files, open no window
        >>> from sklearn_rank.metrics import evaluate
        >>> from sklearn_rank.stats import compare
        >>> y, qid = [2, 0, 1, 1, 0, 0, 1, 0], [1, 1, 2, 2, 3, 3, 4, 4]
        >>> a = evaluate(y, [0, 1, 1, 0, 0, 1, 0, 1], qid=qid, metrics=["mrr"])
        >>> b = evaluate(y, [1, 0, 1, 0, 1, 0, 1, 0], qid=qid, metrics=["mrr"])
        >>> ax = compare({"A": a, "B": b}, n_resamples=100).plot()
        >>> [float(bar.get_height()) for bar in ax.containers[0]]  # B - A, sorted
        [0.5, 0.5, 0.0, 0.0]
        >>> ax.figure.savefig("differences.png")  # doctest: +SKIP
        """
        from .._plots import plot_report

        return plot_report(self, ax, metric, system, baseline)

    def plot_means(self, ax=None, *, metric: str | None = None,
                   confidence: float | None = None):
        """Draw every system's mean with its simultaneous interval (Tukey's).

        The report's Tukey test (``compare(..., test='tukey')`` or
        ``'randomized_tukey'``) gives the honestly significant difference
        HSD at level ``confidence``; each mean is drawn with the interval
        mean -+ HSD / 2, so two systems' intervals are disjoint exactly when
        their difference exceeds HSD: when the test calls it significant
        (before any correction over several metrics; for the randomized test,
        up to the resolution of its resamples). The systems are sorted
        by mean, the best on top; those that differ significantly from the
        best are drawn in grey. Needs matplotlib.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The Axes to draw on; None: those of a new figure.
        metric : str, default=None
            The metric; by default the first.
        confidence : float, default=None
            The level of the intervals; by default ``1 - alpha``.

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> from sklearn_rank.metrics import evaluate
        >>> from sklearn_rank.stats import compare
        >>> y, qid = [2, 0, 1, 1, 0, 0, 1, 0, 1, 0], [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
        >>> evs = {name: evaluate(y, s, qid=qid, metrics=["mrr"]) for name, s in {
        ...     "A": [0, 1, 1, 0, 0, 1, 0, 1, 0, 1], "B": [1, 0, 1, 0, 1, 0, 1, 0, 1, 0],
        ...     "C": [1, 0, 0, 1, 1, 0, 1, 0, 0, 1]}.items()}
        >>> ax = compare(evs, test="tukey").plot_means()
        >>> [t.get_text() for t in ax.get_yticklabels()]
        ['A', 'C', 'B']
        """
        from .._plots import plot_means

        return plot_means(self, ax, metric, 1 - self.alpha if confidence is None
                          else confidence)

    def to_markdown(self) -> str:
        """The comparison table in GitHub-flavoured Markdown, then the notes.

        Every cell is escaped (``|`` as ``\\|``, a backslash as ``\\\\``, a
        newline as ``<br>``), so any system or metric name keeps the table's
        columns.
        """
        rows = [self._header(), *self._rows()]
        lines = ["| " + " | ".join(markdown_cell(c) for c in r) + " |" for r in rows]
        text = self._text_columns()
        lines.insert(1, "|" + "|".join(["---"] * text + ["---:"] * (len(rows[0]) - text))
                     + "|")
        notes = "\n\n".join([self._note(), *self._scale_notes()])
        return "\n".join(lines) + f"\n\n{notes}\n"

    def to_latex(self) -> str:
        """The comparison table as a LaTeX ``tabular`` (booktabs).

        Every special character of a cell is escaped (``\\ { } $ & # ^ _ % ~``
        and ``< > |``, which OT1 fonts print as other glyphs), so any system
        or metric name compiles. What the columns hold for a metric that is not
        an unweighted mean (``gmap``, a count, a weighted evaluation) follows
        as ``%`` comment lines, for the caption.
        """
        rows = [self._header(), *self._rows()]
        text = self._text_columns()
        lines = [r"\begin{tabular}{" + "l" * text + "r" * (len(rows[0]) - text) + "}",
                 r"\toprule", latex_row(latex_cell(c) for c in rows[0]), r"\midrule"]
        p_column = text + 3
        lines += [latex_row(latex_pvalue(c) if j == p_column else latex_cell(c)
                            for j, c in enumerate(r)) for r in rows[1:]]
        lines += [r"\bottomrule", r"\end{tabular}"]
        lines += [latex_comment(note) for note in self._scale_notes()]
        return "\n".join(lines) + "\n"

    def to_frame(self):
        """One row per (system, metric), as a pandas DataFrame (requires pandas).

        ``mean`` is the system's summary (:attr:`means`), ``difference``,
        ``low`` and ``high`` are on the scale of the test (see
        :class:`Comparison`). A report without a single baseline has a row
        per (metric, system, baseline) it compares (a baseline's own row with
        an empty ``baseline``), indexed by the three.
        """
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("Report.to_frame() needs pandas: pip install pandas") from None
        by_key = {}
        for c in self.comparisons:
            by_key.setdefault((c.metric, c.system), []).append(c)
        single = self.baseline is not None
        records = []
        for metric in self.metrics:
            for system in self.systems:
                record = {"metric": metric, "system": system,
                          "mean": self.means[system][metric]}
                found = by_key.get((metric, system), [])
                if not found:
                    records.append(record if single else {**record, "baseline": ""})
                for c in found:
                    records.append({**record, **({} if single else {"baseline": c.baseline}),
                                    **_fields(c)})
        index = ["metric", "system"] if single else ["metric", "system", "baseline"]
        return pd.DataFrame.from_records(records).set_index(index)


def _fields(c) -> dict:
    """The columns of a comparison's row of :meth:`Report.to_frame`."""
    return dict(difference=c.difference, low=c.low, high=c.high, pvalue=c.pvalue,
                pvalue_corrected=c.pvalue_corrected, significant=c.significant, wins=c.wins,
                ties=c.ties, losses=c.losses, effect_size=c.effect_size)
