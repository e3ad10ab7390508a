"""trec_eval-compatible evaluation of runs against relevance judgments: :func:`evaluate_run`.

Its interface is :func:`evaluate_run` (re-exported by :mod:`sklearn_rank.trec`),
:data:`DEFAULT_MEASURES` (its default measures, the command line's too),
:func:`in_trec_order` (whether a spec is ranked in trec_eval's tie order, which
the command line's labels follow) and :func:`as_table` (a qrels or run argument
as a table, also :func:`~sklearn_rank.trec.trec_eval`'s). Here the arguments are
checked and read, the measures split between the trec_eval engine
(:func:`~sklearn_rank.trec._trec_eval.specs.evaluate_engine`) and the registry's
plan, which computes its metrics on the run's rankings laid out by
:func:`~sklearn_rank.trec._ranked_rows.ranked_rows`. That part is also offered in
steps (:func:`registry_plans`, :func:`lay_out`, :func:`merged`) to
:mod:`sklearn_rank.spark`, which lays out and computes each partition's queries
on Spark's executors and finishes the plans on the driver.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from numbers import Real

import numpy as np

from .._utils.validation import HasMethods, Interval, validate_params
from ..metrics import MetricSpec
from ..metrics._engine.data import ranked_data
from ..metrics._engine.ranking import TREC_ORDER
from ..metrics._evaluation import Evaluation, combined, entry_of, with_engine
from ..metrics._plan import Entry, Plan
from ..metrics._vocab.ir_measures import DIVERSITY, IRM_OBJECT, TREC_LAYOUT
from ..metrics._vocab.spec import listed_metrics, parse_specs
from ..metrics._vocab.trec_eval_table import engine_item
from ._frames import DataFrame, is_frame
from ._io import read_qrels, read_run
from ._ranked_rows import ranked_rows
from ._subtopics import SubtopicQrels, as_subtopic_qrels
from ._tables import Qrels, Run
from ._trec_eval.specs import evaluate_engine

__all__ = ["DEFAULT_MEASURES", "as_table", "evaluate_run", "in_trec_order", "lay_out", "merged",
           "registry_plans"]

#: The measures :func:`evaluate_run` and ``sklearn-rank evaluate`` compute by default.
DEFAULT_MEASURES = ("map", "P.10", "ndcg_cut.10", "recip_rank")


def as_table(value, cls, reader, what):
    """``value`` as a ``cls`` table (:class:`Qrels` or :class:`Run`): kept if it is
    one, else built from a dict, a DataFrame or read from a path by ``reader``;
    ``what`` names the argument in errors."""
    if isinstance(value, cls):
        return value
    if isinstance(value, dict):
        return cls.from_dict(value)
    if is_frame(value):
        return cls.from_frame(value)
    if isinstance(value, str | os.PathLike) or hasattr(value, "read"):
        return reader(value)
    raise TypeError(f"{what} must be a path, a file, a {cls.__name__}, a DataFrame or a "
                    f"{{qid: {{docno: value}}}} dict; got {type(value).__name__}.")


@validate_params({
    "qrels": [str, os.PathLike, HasMethods(("read",)), Qrels, SubtopicQrels, DataFrame, dict],
    "run": [str, os.PathLike, HasMethods(("read",)), Run, DataFrame, dict],
    "metrics": [str, MetricSpec, Iterable, IRM_OBJECT],
    "relevance_level": [Interval(Real, None, None, closed="neither")],
    "complete": ["boolean"],
    "judged_only": ["boolean"],
})
def evaluate_run(qrels, run, metrics=DEFAULT_MEASURES, *, relevance_level=1, complete=False,
                 judged_only=False, **options) -> Evaluation:
    """Evaluate a TREC run against relevance judgments, as trec_eval does.

    Parameters
    ----------
    qrels : path, file, Qrels, SubtopicQrels, DataFrame or dict
        Relevance judgments: a qrels file (see :func:`read_qrels`), a
        :class:`Qrels`, a pandas or polars DataFrame with the columns ``qid,
        docno, label`` (PyTerrier) or ``query_id, doc_id, relevance``
        (ir_measures; see :meth:`Qrels.from_frame`), or ``{qid: {docno:
        level}}``; levels are integers, as in trec_eval (``1.5`` is a
        ``ValueError``). The diversity measures need subtopic judgments: a
        file (read with its second field as the subtopic, see
        :func:`read_subtopic_qrels`), a :class:`SubtopicQrels` or a
        DataFrame with an ``iteration`` column.
    run : path, file, Run, DataFrame or dict
        The run: a run file (see :func:`read_run`), a :class:`Run`, a
        DataFrame with the columns ``qid, docno, score`` (PyTerrier) or
        ``query_id, doc_id, score`` (ir_measures; see :meth:`Run.from_frame`),
        or ``{qid: {docno: score}}``. Files are read with ``engine="auto"``;
        pass ``read_qrels(path, engine=...)`` and ``read_run(path,
        engine=...)`` to choose the reader.
    metrics : str or list of str, default=("map", "P.10", "ndcg_cut.10", "recip_rank")
        trec_eval measure names (``"P.5,10"``, ``"ndcg_cut.10"``,
        ``"recall.100"``, ``"recip_rank"``, ``"gm_map"``, ``"Rprec"``,
        ``"success.1"``, ``"set_P"``, ``"set_F"``, ...), any registry spec
        (``"map"``, ``"ndcg@10"``, ``"bpref"``, ``"err@20"``, ``"rank_eff"``,
        ...) or ir_measures name (``"nDCG@10"``, ``"AP(rel=2)"``, ...), each
        with the meaning it has in every entry point: a registry spec is the
        registry's metric here too (``ndcg@10`` has gain 2**l - 1; tied
        scores are averaged, see Notes), a trec_eval name is trec_eval's
        measure and an ir_measures name ir_measures'. Where a registry name
        is also trec_eval's (``map``, ``ndcg``, ``bpref``, ``recall``), the
        registry's holds: on runs with tied scores ``map`` can differ from
        trec_eval's ``map``; ``convention="trec_eval"`` or :func:`trec_eval`
        give trec_eval's. trec_eval's other families and sets
        (``"infAP"``, ``"iprec_at_recall.0.5"``, ``"utility"``, ``"G"``,
        ``"num_ret"``, ``"official"``, ``"all_trec"``, ...) and ir_measures'
        ``infAP``, ``IPrec@x``, ``NumRet``, ``NumRel``, ``NumQ``, ``SetAP``,
        ``SetP(relative=True)``, ``SetF(beta=b)`` are computed by the
        trec_eval 10.0 engine (:func:`trec_eval`'s), keyed by the names
        trec_eval prints (``"iprec_at_recall_0.50"``) or ir_measures' ``str()``;
        the strings ``runid`` and ``relstring`` are :func:`trec_eval`'s only.
        ir_measures' diversity measures (``"alpha_nDCG@20"``,
        ``"alpha_DCG@k"``, ``"ERR_IA@k"``, ``"nERR_IA@k"``, ``"NRBP"``,
        ``"nNRBP"``, ``"AP_IA"``, ``"P_IA@k"``, ``"StRecall@k"``, with
        ``rel=``, ``alpha=``, ``beta=``, ``judged_only=``) are ndeval's, as
        ir_measures' pyndeval provider computes them, on subtopic judgments;
        ``nNRBP`` is NaN for a query without a relevant subtopic (left out of
        the mean, counted in ``n_empty``).
    relevance_level : float, default=1
        A document is relevant when its level is >= relevance_level
        (trec_eval's ``-l``); it sets ``threshold`` of the binary metrics, not
        the gains of NDCG, as in trec_eval.
    complete : bool, default=False
        trec_eval's ``-c``: judged queries the run misses count, with every
        measure 0 (GMAP's floor applies).
    judged_only : bool, default=False
        trec_eval's ``-J``: unjudged retrieved documents are removed before
        ranking.
    **options
        Options of the registry's metrics, as for
        :func:`~sklearn_rank.metrics.evaluate` (``gain``, ``ties``,
        ``empty``, ...). ``convention="trec_eval"`` gives every registry
        spec trec_eval's meaning (linear gain, ties by decreasing document
        id), so ``evaluate_run(qrels, run, ["map", "ndcg"],
        convention="trec_eval")`` equals trec_eval's ``map`` and ``ndcg``.
        trec_eval's and ir_measures' names keep their own meaning whatever
        the options.

    Returns
    -------
    evaluation : Evaluation
        Per-query values and means; ``.qids`` are the evaluated queries (str,
        exactly the files' ids: see :attr:`Qrels.qid`). For
        a trec_eval-engine measure ``mean`` is trec_eval's summary: a sum for
        the counts (``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``,
        ``num_nonrel_judged_ret``, ``NumRet``, ``NumRel``, ``NumQ``; their
        entry of ``metrics`` has ``summary == "sum"``), the geometric mean for
        ``gm_bpref``; ``num_q``'s and ``NumQ``'s per-query values are 1
        (ir_measures': 0 for a judged query missing from the run).

    Notes
    -----
    trec_eval's semantics: the run is ranked by decreasing score, compared as
    doubles as trec_eval 10.0 does (9.0.8 and pytrec_eval round scores to
    float32 first), ties by decreasing document id
    (its rank column is ignored); the ideal ranking of
    NDCG and the number of relevant documents come from every judged document
    of the query, retrieved or not; unjudged retrieved documents are
    non-relevant (bpref and RankEff skip them); a negative level in the qrels
    marks a document as in the pool but unjudged; queries in the run but not in
    the qrels are skipped. Every registry metric works here, on these rules,
    with its own tie policy: ``ties="average"`` (the default) averages over
    the orders of documents with equal scores, as on flat rows; ``"stable"``
    keeps the run's order (its lines', or the dict's or frame's rows');
    ``"pessimistic"`` / ``"optimistic"`` put the least / most relevant first.
    trec_eval's names, and registry specs under ``convention="trec_eval"``,
    break ties by decreasing document id, as trec_eval. ir_measures' names
    rank the run as their ir_measures provider does (ties
    by increasing document id for ``Judged``, ``Compat``, ``RR@k`` and the
    diversity measures, in the run's row order for the C/W/L measures and
    ``Accuracy``; ``Judged`` counts a negative level as judged), whatever
    ``ties`` says.

    Examples
    --------
    >>> from sklearn_rank.trec import evaluate_run
    >>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d4": 0.7}, "q2": {"d2": 0.5, "d1": 0.4}}
    >>> ev = evaluate_run(qrels, run, ["map", "P.2", "ndcg_cut.3"])
    >>> ev.per_query["map"]
    array([0.5, 0.5])
    >>> round(ev.mean["ndcg_cut.3"], 6)
    0.695559

    Diversity measures read subtopic judgments (the second field of the file):

    >>> import io
    >>> from sklearn_rank.trec import read_subtopic_qrels
    >>> intents = read_subtopic_qrels(io.StringIO("q1 1 d1 1\\nq1 2 d1 1\\nq1 2 d4 1\\n"))
    >>> evaluate_run(intents, run, ["StRecall@1", "P_IA@3"]).per_query["P_IA@3"]
    array([0.5])
    """
    listed = listed_metrics(metrics)
    engine = {i: item for i, metric in enumerate(listed)
              if (item := engine_item(metric)) is not None}
    rest = [metric for i, metric in enumerate(listed) if i not in engine]
    if rest:  # (a misspelt metric is told before anything is read)
        _parsed(rest)
    run = as_table(run, Run, read_run, "run")
    qrels, subtopics = _judgments(qrels, engine, len(listed))
    cache: dict = {}  # the join and the rankings, shared by the layouts

    def columns(only, layout):
        return ranked_rows(qrels, run, complete, judged_only or only, layout, cache)

    if not engine:
        return _evaluate(metrics, relevance_level, options, columns)
    registry = None
    if rest:
        registry = _evaluate(rest, relevance_level, options, columns)
    qids, entries = evaluate_engine(list(engine.values()), qrels, run,
                                    None if registry is None else registry.qids,
                                    relevance_level=relevance_level, complete=complete,
                                    judged_only=judged_only, subtopics=subtopics)
    return with_engine(registry, qids, listed, dict(zip(engine, entries, strict=True)))


def _judgments(qrels, engine: dict, n_listed: int):
    """``(Qrels, SubtopicQrels)``: the subtopic judgments when a diversity
    measure is asked for (else None; then the qrels only when another
    measure is asked for, as one judgment per document)."""
    if not any(item.irm is not None and item.irm[0] in DIVERSITY for item in engine.values()):
        return as_table(qrels, Qrels, read_qrels, "qrels"), None
    subtopics = as_subtopic_qrels(qrels)
    others = n_listed > sum(item.irm is not None and item.irm[0] in DIVERSITY
                            for item in engine.values())
    return (subtopics.to_qrels() if others else None), subtopics


def _evaluate(metrics, relevance_level, options: dict, columns) -> Evaluation:
    """The metrics package's part: parse the metrics, check the options
    (``threshold`` from ``relevance_level``), then compute them on the ranked
    columns that
    ``columns(judged_only, layout)`` gives (the arguments of ``ranked_data``);
    specs with ``judged_only`` (ir_measures' ``judged_only=True``) on the
    judged documents alone, ir_measures' names on their provider's layout
    (``MetricSpec.layout``: its order of tied scores, kept as laid out), the
    names of trec_eval and ir_measures in trec_eval's order
    (:func:`in_trec_order`)."""
    specs = _parsed(metrics)
    options, plans = registry_plans(specs, relevance_level, options)
    laid_out: dict = {}
    parts = [plan.evaluate(lay_out(key, plan, options, relevance_level, columns, laid_out))
             for key, plan in plans]
    return parts[0] if len(parts) == 1 else merged(parts, specs)


def registry_plans(specs: list, relevance_level, options: dict) -> tuple[dict, list]:
    """``(options, [(layout key, plan)])``: the options with ``threshold`` from
    ``relevance_level`` (checked once for all specs), and a plan per layout
    the registry's ``specs`` are computed on (``(judged_only, layout)``, the
    arguments of :func:`lay_out`'s ``columns``), in the specs' order."""
    options = dict(options)
    if any("threshold" in s.info.params for s in specs):
        options.setdefault("threshold", relevance_level)
    Plan.of(specs, options, caller="evaluate_run")  # the options, checked once for all
    groups: dict = {}
    for spec in specs:
        groups.setdefault((spec.judged_only, spec.layout), []).append(spec)
    return options, [((only, layout or TREC_LAYOUT),
                      _in_trec_order(Plan.resolved(group, options), options))
                     for (only, layout), group in groups.items()]


def lay_out(key, plan: Plan, options: dict, relevance_level, columns, laid_out: dict):
    """The ranked data of layout ``key`` for ``plan`` (kept in ``laid_out``),
    from ``columns(judged_only, layout)``."""
    if key not in laid_out:
        labels, lengths, qids, n_retrieved, judged, scores, rows, codes = columns(*key)
        negative = options.get("threshold", relevance_level) < 0  # trec_eval's -l < 0
        if negative:
            _check_dummies([e.spec for e in plan.entries], options, qids, n_retrieved)
        laid_out[key] = ranked_data(labels, lengths, qids, scores=scores, input_order=rows,
                                    n_retrieved=n_retrieved, judged=judged,
                                    codes=codes if negative else None)
    return laid_out[key]


def _check_dummies(specs, options: dict, qids, n_retrieved) -> None:
    """Refuse trec_eval's measures under a negative level on judged queries the
    run lacks (``complete``): trec_eval gives each one dummy retrieved document,
    which such a level counts as relevant; evaluate_run lays out none."""
    missing = np.flatnonzero(n_retrieved == 0)
    if missing.shape[0] and any(in_trec_order(spec, options) for spec in specs):
        raise ValueError(
            f"relevance_level < 0 with complete=True: the run lacks {missing.shape[0]} judged "
            f"queries (first {str(qids[missing[0]])!r}), to which trec_eval gives a dummy "
            "retrieved document that a negative level counts as relevant, and evaluate_run "
            "does not; "
            "use sklearn_rank.trec.trec_eval (the command's --format trec) for trec_eval's "
            "numbers, or a relevance level >= 0.")


def in_trec_order(spec: MetricSpec, options=None) -> bool:
    """Whether evaluate_run ranks ``spec``'s ties in trec_eval's order under
    the call's ``options``.

    A spec written as a trec_eval measure (``P.10``, ``ndcg_cut.10``) keeps
    trec_eval's meaning: its ties in trec_eval's order (decreasing document
    id, the order the run is laid out in: the internal policy
    :data:`~sklearn_rank.metrics._engine.ranking.TREC_ORDER`), whatever
    ``ties`` the call sets, as does an ir_measures name (ir_measures'
    trec_eval provider's order); so does a registry spec under
    ``convention="trec_eval"`` that sets no ``ties`` of its own. Other
    registry specs keep the registry's meaning (``ndcg@10``: gain 2**l - 1,
    tied scores averaged; ``ties="stable"``: the run's order).
    """
    options = options or {}
    if "ties" not in spec.info.params:
        return False
    if spec.trec is not None or spec.label is not None:  # trec_eval's, ir_measures' name
        return True
    return ("ties" not in dict(spec.params) and options.get("ties") is None
            and spec.resolve(options)["convention"] == "trec_eval")


def _in_trec_order(plan: Plan, options) -> Plan:
    """``plan`` with the entries :func:`in_trec_order` ranked in trec_eval's
    order, their keys unchanged. A trec_eval or ir_measures name also carries
    its layout (trec_eval's unless its provider's), which tells the
    evaluation that the registry's spelling (``p@5``, tied scores averaged)
    is another metric than the name (``P_5``)."""
    def pinned(entry):
        spec = entry.spec
        if spec.trec is not None or spec.label is not None:  # (printed by that name)
            spec = replace(spec, layout=spec.layout or TREC_LAYOUT)
        return Entry(entry.key, spec, {**entry.options, "ties": TREC_ORDER})

    return Plan(pinned(entry) if in_trec_order(entry.spec, options) else entry
                for entry in plan.entries)


def _parsed(metrics) -> list:
    """The specs of ``metrics``, or an error that points a trec_eval measure
    the registry does not know to ``trec_eval()``."""
    try:
        return parse_specs(metrics)
    except ValueError as error:
        _point_to_trec_eval(metrics, error)
        raise


def merged(parts: list, specs: list) -> Evaluation:
    """One evaluation of the same queries from several (keys in ``specs``' order)."""
    found = {str(m): (part, m) for part in parts for m in part.metrics}

    def entries():
        for spec in specs:
            part, metric = found[str(spec)]
            yield entry_of(part, str(spec), metric)

    return combined(parts[0].qids, parts[0].weights, entries(), lengths=parts[0].lengths)


def _point_to_trec_eval(metrics, error: ValueError) -> None:
    """A trec_eval measure the registry does not know (``infAP``,
    ``iprec_at_recall``, ``official``, ...): say where it is computed."""
    from ..metrics._vocab.trec_eval_table import MEASURES, NICKNAMES

    names = [metrics] if isinstance(metrics, str) else list(metrics)
    for name in names:
        if isinstance(name, str) and name.partition(".")[0] in {*MEASURES, *NICKNAMES}:
            try:
                parse_specs([name])
                continue
            except ValueError:
                pass
            raise ValueError(
                f"{error} {name!r} is a trec_eval measure that evaluate_run does not "
                f"compute: sklearn_rank.trec.trec_eval(qrels, run, [{name!r}]) gives every "
                "trec_eval 10.0 measure, as the binary prints it.") from None
