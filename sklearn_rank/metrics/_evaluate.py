"""Evaluating several ranking metrics at once: :func:`evaluate`."""

from __future__ import annotations

from collections.abc import Iterable

from .._utils.queries import group_hint
from .._utils.validation import validate_params
from ._engine.inputs import prepare
from ._evaluation import Evaluation, with_engine
from ._plan import Plan
from ._trec_flat import ENGINE_OPTIONS, engine_items, flat_engine
from ._vocab.ir_measures import IRM_OBJECT
from ._vocab.spec import MetricSpec, listed_metrics, parse_specs

__all__ = ["evaluate"]


@validate_params({"y_true": ["array-like"], "y_score": ["array-like"],
                  "qid": ["array-like", None], "metrics": [str, MetricSpec, Iterable, IRM_OBJECT],
                  "sample_weight": ["array-like", None]})
def evaluate(y_true, y_score, *, qid=None, metrics=("ndcg@10",), sample_weight=None,
             **options) -> Evaluation:
    """Evaluate several ranking metrics per query, ranking each query once.

    Parameters
    ----------
    y_true : array-like of shape (n_rows,) or (n_queries, n_docs)
        Graded relevance labels (non-negative for gain-based metrics).
    y_score : array-like of the same shape as ``y_true``
        Predicted scores; higher ranks first.
    qid : array-like of shape (n_rows,), default=None
        Query id of each row, of any hashable dtype (int, str, object, pandas
        Series). Rows may come in any order and a query's rows need not be
        contiguous. Required for 1-D input; must be None for the 2-D layout of
        :func:`sklearn.metrics.ndcg_score`, where each row is a query. A set,
        dict or dict view is refused: it has no row order.
    metrics : str, MetricSpec or list of them, default=("ndcg@10",)
        Metric specs such as ``"ndcg@10"``, ``"dcg(gain='linear')@5"`` or
        ``"ndcg@10-"`` (see :func:`parse_metric` and :func:`get_metric_names`),
        ir_measures' names (``"nDCG@10"``, ``"AP(rel=2)"``) and trec_eval's
        (``"P.5,10"``, ``"ndcg_cut.10"``, ``"recip_rank"``), including the
        families only trec_eval has (``"num_ret"``, ``"iprec_at_recall"``,
        ``"11pt_avg"``, ``"Rprec_mult"``, ``"relative_P.5"``, ``"G"``,
        ``"infAP"``, ``"utility"``, ``"official"``, ``"all_trec"``, ...; see
        Notes).
    sample_weight : array-like of shape (n_rows,) or (n_queries,), default=None
        Per-row weights (1-D layout; a query's weight is the mean of its rows'
        weights, LightGBM's rule) or per-query weights (2-D layout).
    **options
        Options applied to every metric that takes them and does not set them
        in its spec (``gain``, ``discount``, ``log_base``, ``ties``, ``empty``,
        ``convention``, ``threshold``). The cut-off belongs in the spec
        (``"ndcg@10"``). trec_eval's own families read ``threshold``,
        ``ties`` and ``convention`` only.

    Returns
    -------
    evaluation : Evaluation
        Per-query values (``.per_query``), means (``.mean``), ``.qids``,
        ``.n_queries`` and ``.n_empty``, keyed by canonical spec; trec_eval's
        and ir_measures' names key as those tools print them (``"P_5"``,
        ``"ndcg_cut_10"``, ``"iprec_at_recall_0.50"``, ``"nDCG@10"``), and
        any spelling of a metric finds it (``ev.mean["p@5"]``).

    See Also
    --------
    ndcg_score : One metric as a float.
    parse_metric : The spec grammar.

    Notes
    -----
    The inputs are validated and grouped once and every query is ranked once
    per tie policy in use, whatever the number of metrics.

    trec_eval's families that no registry metric computes are computed by the
    trec_eval 10.0 engine of :func:`~sklearn_rank.trec.evaluate_run`, on the
    run that flat rows stand for: every row is a retrieved and judged
    document whose label (an integer >= 0) is its relevance level, relevant
    when it is >= ``threshold`` (trec_eval's ``-l``), so there is no
    unjudged document and no unretrieved relevant one; each query is ranked
    by decreasing score, equal scores ordered by ``ties`` (``"stable"``,
    also under ``convention="trec_eval"``: input order). Their values are
    :func:`~sklearn_rank.trec.evaluate_run`'s on those qrels and run (and
    the trec_eval binary's when no scores tie: it breaks ties by document
    id). They have no tie-averaged form: under ``ties="average"`` a query
    with tied scores is a ValueError for those whose value depends on the
    order of tied documents (the counts and set measures ``num_*``,
    ``set_*``, ``utility``, ``unj`` take any ``ties``). A count's ``mean``
    is trec_eval's summary, the sum over queries. ``runid`` and
    ``relstring`` (strings about a run file) and ir_measures' ``Compat`` and
    ``Accuracy`` are refused, naming :func:`~sklearn_rank.trec.trec_eval` or
    :func:`~sklearn_rank.trec.evaluate_run`; so is ``sample_weight`` with
    these measures.

    Examples
    --------
    >>> from sklearn_rank.metrics import evaluate
    >>> y_true = [3, 2, 3, 0, 1, 2, 0, 1]
    >>> y_score = [.9, .8, .7, .6, .5, .4, .2, .1]
    >>> qid = ["a"] * 6 + ["b"] * 2
    >>> ev = evaluate(y_true, y_score, qid=qid, metrics=["ndcg@3", "dcg(gain='linear')"])
    >>> ev.per_query["ndcg@3"].round(4)
    array([0.9595, 0.6309])
    >>> round(ev.mean["ndcg@3"], 4)
    0.7952
    >>> ev.qids
    array(['a', 'b'], dtype='<U1')
    >>> ev = evaluate(y_true, y_score, qid=qid, metrics=["P.5", "num_rel", "relative_P.2"])
    >>> ev.mean
    {'P_5': 0.5, 'num_rel': 6.0, 'relative_P_2': 1.0}
    """
    listed = listed_metrics(metrics)
    engine = engine_items(listed)
    if not engine:
        plan = Plan.of(listed, options, caller="evaluate")
        return plan.evaluate(prepare(y_true, y_score, qid, sample_weight))
    return _with_engine(listed, engine, options, prepare(y_true, y_score, qid, sample_weight))


def _with_engine(listed: list, engine: dict, options: dict, data) -> Evaluation:
    """:func:`evaluate` of ``listed`` metrics, some of which (``engine``:
    position -> item) the trec_eval engine computes (:mod:`~sklearn_rank.metrics._trec_flat`)."""
    rest = [metric for i, metric in enumerate(listed) if i not in engine]
    registry = None
    if rest:
        accepted = {p for s in parse_specs(rest) for p in s.info.params}
        plan = Plan.of(rest, {k: v for k, v in options.items()
                              if k in accepted or k not in ENGINE_OPTIONS}, caller="evaluate")
        registry = plan.evaluate(data)
    else:
        unknown = [k for k in options if k not in ENGINE_OPTIONS]
        if unknown:
            names = [str(metric) for metric in listed]
            raise TypeError(f"evaluate() got an option {unknown[0]!r} that none of the metrics "
                            f"{names} takes.{group_hint(unknown[0])} Options they take: "
                            f"{', '.join(ENGINE_OPTIONS)}.")
    entries = dict(zip(engine, flat_engine(list(engine.values()), data, options), strict=True))
    return with_engine(registry, data.qids, listed, entries)
