"""The :class:`Evaluation` result of :func:`~sklearn_rank.metrics.evaluate`."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._vocab.names import safe_name
from ._vocab.spec import MetricSpec, parse, parse_specs

__all__ = ["Evaluation", "combined", "entry_of", "with_engine"]


class _SpecDict(dict):
    """A dict keyed by canonical metric specs that also finds other spellings.

    ``ev.mean[" ndcg @ 10"]`` finds the entry stored under ``"ndcg@10"`` and
    ``ev.mean["precision@5"]`` the one under ``"p@5"`` (the same canonical
    spec; ``"ndcg(gain='exponential')@10"`` is another key: a convention can
    change the gain of a bare ``ndcg@10``); an entry keyed by the name of
    another vocabulary (trec_eval's ``"P_5"``, ir_measures' ``"nDCG@10"``) is
    found by any spelling of its spec too (``"p@5"``, ``"P.5"``) unless it
    was computed from a run in that vocabulary's own way (its ``layout``:
    then the registry's spelling is another metric), and by the text it was
    asked for (``aliases``: ``"NumRelRet"`` -> ``"NumRet(rel=1)"``). A key
    found nowhere is a KeyError that lists the keys.
    """

    def __init__(self, values, aliases=None):
        super().__init__(values)
        self._aliases = dict(aliases or {})

    def key_of(self, key):
        """The key under which ``key``, any spelling of a metric, is stored (see the
        class's doc); ``key`` itself when no stored metric is spelled so."""
        if dict.__contains__(self, key):
            return key
        if isinstance(key, str) and key.strip() in self._aliases:
            return self._aliases[key.strip()]
        try:
            spec = parse(key)
        except (TypeError, ValueError):
            return key
        text = str(spec)
        if dict.__contains__(self, text):
            return text
        return self._aliases.get(_plain(spec), text)

    def __getitem__(self, key):
        found = self.key_of(key)
        if not dict.__contains__(self, found):
            raise KeyError(f"{key!r} is not a metric of this evaluation; its keys: "
                           f"{', '.join(map(repr, dict.keys(self)))}")
        return dict.__getitem__(self, found)

    def __contains__(self, key):
        return dict.__contains__(self, self.key_of(key))

    def get(self, key, default=None):
        return dict.get(self, self.key_of(key), default)


def _plain(spec) -> str:
    """A spec's canonical spelling in the registry's vocabulary."""
    return str(replace(spec, label=None, trec=None))


def _aliases(metrics, keys, given) -> dict:
    """Other spellings of the keys: the registry spelling of a spec keyed by
    another vocabulary's name, unless the spec read a run in that
    vocabulary's own way (``layout``: evaluate_run's trec_eval and
    ir_measures names, whose tie order is not the registry's), and the
    ``given`` ones (text asked -> key)."""
    out = {}
    for metric in metrics:
        if isinstance(metric, MetricSpec) and metric.layout is None \
                and str(metric) in keys and _plain(metric) not in keys:
            out.setdefault(_plain(metric), str(metric))
    out.update({text: key for text, key in (given or {}).items()
                if key in keys and text not in keys})
    return out


class Evaluation:
    """Per-query and mean values of ranking metrics.

    Returned by :func:`~sklearn_rank.metrics.evaluate`; not meant to be built
    by hand. Results are keyed by the canonical spelling of each metric spec
    (``str(parse_metric(spec))``): a spec written in trec_eval's or
    ir_measures' vocabulary keys as that vocabulary prints it (``"P.5"`` ->
    ``"P_5"``, ``"ndcg_cut.10"`` -> ``"ndcg_cut_10"``,
    ``"iprec_at_recall.0.5"`` -> ``"iprec_at_recall_0.50"``, ``"nDCG@10"``);
    lookups accept any spelling of the spec (``ev.mean["p@5"]``) and the
    text a metric was asked for (``"NumRelRet"``); another key is a
    KeyError that lists the keys.
    Two evaluations are equal (``==``) when their metrics, query ids, weights,
    per-query values, means and empty counts are all exactly equal (NaN equal
    to NaN) — how the chunked and Dask paths are checked against this one.

    Attributes
    ----------
    qids : ndarray of shape (n_queries,)
        The unique query ids, sorted. For 2-D input, the row numbers.
    per_query : dict of str -> ndarray of shape (n_queries,)
        The value of each metric for each query, aligned with ``qids``. Queries
        left out under ``empty="skip"`` (and all empty queries under
        ``empty="nan"``) hold NaN.
    mean : dict of str -> float
        The (weighted) mean over counted queries; for ``gmap``, the geometric
        mean.
    n_queries : int
        Number of queries.
    n_empty : dict of str -> int
        Number of queries without relevant documents for each metric (the
        queries the ``empty`` policy applied to).
    weights : ndarray of shape (n_queries,) or None
        Per-query weights (the mean of each query's ``sample_weight``), aligned
        with ``qids``; None when unweighted.
    metrics : tuple of MetricSpec
        The metrics, in the order they were asked for.
    lengths : ndarray of shape (n_queries,) or None
        Number of rows (documents) of each query, aligned with ``qids``: the
        impressions that weigh ``gauc``'s mean. None when not known (an
        evaluation of the trec_eval engine's measures only).
    """

    def __init__(self, qids, per_query, mean, n_empty, weights, metrics, aliases=None, *,
                 lengths=None):
        aliases = _aliases(metrics, per_query, aliases)
        self.qids = qids
        self.lengths = lengths
        self.per_query = _SpecDict(per_query, aliases)
        self.mean = _SpecDict(mean, aliases)
        self.n_empty = _SpecDict(n_empty, aliases)
        self.weights = weights
        self.metrics = tuple(metrics)

    @property
    def n_queries(self) -> int:
        return int(self.qids.shape[0])

    def to_frame(self):
        """Per-query values as a pandas DataFrame indexed by ``qid``.

        Requires pandas (``pip install sklearn-rank[all]``).
        """
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Evaluation.to_frame() needs pandas: pip install pandas"
            ) from None
        frame = pd.DataFrame(dict(self.per_query), index=pd.Index(self.qids, name="qid"))
        if self.weights is not None:
            frame.insert(0, "weight", self.weights)
        return frame

    def to_dict(self, names: str = "spec") -> dict[str, float]:
        """The mean of each metric, as a plain dict for a tracker or a JSON file.

        Parameters
        ----------
        names : {"spec", "safe"}, default="spec"
            ``"spec"`` keys the values by the canonical spec (``ndcg@10``);
            ``"safe"`` by the same spec in lower-case letters, digits and
            underscores (``ndcg_at_10``, ``ndcg(gain='linear')@10`` ->
            ``ndcg_gain_linear_at_10``), which experiment trackers accept
            (MLflow refuses ``@``, parentheses, quotes and ``=``). Different
            specs get different safe names.

        Returns
        -------
        dict of str -> float
            The means, in the order of :attr:`metrics`.

        Examples
        --------
        >>> from sklearn_rank.metrics import evaluate
        >>> ev = evaluate([2, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], qid=[1, 1, 2, 2],
        ...               metrics=["ndcg@10", "ndcg(gain='linear')@10"])
        >>> ev.to_dict(names="safe")
        {'ndcg_at_10': 1.0, 'ndcg_gain_linear_at_10': 1.0}
        """
        if names not in ("spec", "safe"):
            raise ValueError(f"names must be 'spec' or 'safe'; got {names!r}.")
        means = {key: float(value) for key, value in dict.items(self.mean)}
        if names == "spec":
            return means
        # a trec_eval-engine measure (evaluate_run) names itself
        named = {str(m): m.safe_name for m in self.metrics if hasattr(m, "safe_name")}
        return {named.get(key) or safe_name(key): value for key, value in means.items()}

    def plot(self, ax=None, *, metrics=None, kind: str = "auto", label: str | None = None):
        """Draw the means: metric@k curves, as ``sklearn-rank evaluate --plot``
        does, or a bar per metric.

        Needs matplotlib (``pip install "sklearn-rank[plot]"``).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The Axes to draw on (another evaluation's, to overlay them); None:
            those of a new figure.
        metrics : list of str, default=None
            The metrics to draw, in any spelling ``mean`` accepts; None: all.
        kind : {"auto", "curve", "bar"}, default="auto"
            ``"curve"``: for each family of metrics at several cut-offs
            (``p@1`` ... ``p@20``, trec_eval's ``P.5,10,20``), a line of its
            means over the cut-off k (integer ticks); a metric with no other
            cut-off in the evaluation is an error. ``"bar"``: a bar per
            metric, its mean written on it. ``"auto"``: curves when every
            metric drawn has other cut-offs here, else bars (never a metric
            left out).
        label : str, default=None
            The evaluation's name in the legend (a run, a model); the curves
            are otherwise named by their family (``p@k``).

        Returns
        -------
        matplotlib.axes.Axes

        Notes
        -----
        The curves of an evaluation from
        :func:`~sklearn_rank.trec.evaluate_run` with ``P.1`` ... ``P.20`` are
        those the command line draws for ``-m P.20``. The per-query values
        (:attr:`per_query`, :meth:`to_frame`) give distributions; two systems'
        per-query differences are :meth:`Report.plot
        <sklearn_rank.stats.Report.plot>`'s.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")  # draw into files, open no window
        >>> from sklearn_rank.metrics import evaluate
        >>> ev = evaluate([2, 0, 1, 0, 1, 1], [0.9, 0.8, 0.7, 0.1, 0.3, 0.2],
        ...               qid=[1, 1, 2, 2, 3, 3], metrics=["p@1", "p@2"])
        >>> ax = ev.plot(label="bm25")
        >>> line = ax.get_lines()[0]
        >>> line.get_xdata().tolist(), line.get_ydata().tolist()
        ([1, 2], [1.0, 0.6666666666666666])
        >>> ax.figure.savefig("p_at_k.png")  # doctest: +SKIP
        """
        from .._plots import plot_evaluation

        return plot_evaluation(self, ax, metrics, kind, label)

    def __repr__(self) -> str:
        names = list(self.mean)
        means = [f"{self.mean[n]:.6f}" for n in names]
        width = max(len("metric"), *(len(n) for n in names))
        vwidth = max(len("mean"), *(len(m) for m in means))
        lines = [f"Evaluation(n_queries={self.n_queries}"
                 + (", weighted" if self.weights is not None else "") + ")",
                 f"  {'metric':<{width}}  {'mean':>{vwidth}}  {'n_empty':>7}"]
        for name, mean in zip(names, means, strict=True):
            lines.append(f"  {name:<{width}}  {mean:>{vwidth}}  {self.n_empty[name]:>7d}")
        return "\n".join(lines)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Evaluation):
            return NotImplemented
        if (self.metrics != other.metrics or not np.array_equal(self.qids, other.qids)
                or (self.weights is None) != (other.weights is None)
                or (self.weights is not None and not np.array_equal(self.weights,
                                                                    other.weights))):
            return False
        keys = dict.keys(self.per_query)
        return (keys == dict.keys(other.per_query)
                and all(np.array_equal(self.per_query[k], other.per_query[k], equal_nan=True)
                        and np.array_equal(dict.__getitem__(self.mean, k),
                                           dict.__getitem__(other.mean, k), equal_nan=True)
                        and dict.__getitem__(self.n_empty, k)
                        == dict.__getitem__(other.n_empty, k) for k in keys))

    __hash__ = None


def with_engine(registry: Evaluation | None, qids, listed: list, engine: dict) -> Evaluation:
    """One evaluation, in the order asked for, of the metrics ``listed``: the
    registry's keys (of ``registry``) and the trec_eval engine's entries
    (``engine``: position in ``listed`` -> its entries); a key met again
    keeps its first value. A metric asked for as text that gives one engine
    entry is found by that text too (``ev.mean["NumRelRet"]``)."""
    groups = [engine[i] if i in engine else [str(s) for s in parse_specs([metric])]
              for i, metric in enumerate(listed)]
    specs = {} if registry is None else {str(m): m for m in registry.metrics}
    aliases = {}
    for metric, group in zip(listed, groups, strict=True):
        if len(group) == 1 and not isinstance(group[0], str) and not isinstance(metric,
                                                                              MetricSpec):
            aliases[str(metric).strip()] = group[0][0].key

    def entries():
        for group in groups:
            for entry in group:
                if isinstance(entry, str):  # a registry key
                    yield entry_of(registry, entry, specs[entry])
                else:
                    spec, values, summary, empty = entry
                    yield spec.key, spec, values, summary, empty

    return combined(qids, None if registry is None else registry.weights, entries(), aliases,
                    lengths=None if registry is None else registry.lengths)


def entry_of(evaluation: Evaluation, key: str, spec) -> tuple:
    """``(key, spec, per-query values, mean, n_empty)`` of ``evaluation``'s ``key``."""
    return (key, spec, evaluation.per_query[key], evaluation.mean[key],
            evaluation.n_empty[key])


def combined(qids, weights, entries, aliases=None, *, lengths=None) -> Evaluation:
    """An evaluation of ``qids`` from ``(key, spec, values, mean, n_empty)``
    entries, in their order; a key met again keeps its first entry
    (``aliases``: other texts of keys, see :class:`Evaluation`; ``lengths``:
    the queries' numbers of rows)."""
    per_query, mean, n_empty, metrics = {}, {}, {}, []
    for key, spec, values, summary, empty in entries:
        if key not in per_query:
            per_query[key], mean[key], n_empty[key] = values, summary, empty
            metrics.append(spec)
    return Evaluation(qids, per_query, mean, n_empty, weights, metrics, aliases,
                      lengths=lengths)
