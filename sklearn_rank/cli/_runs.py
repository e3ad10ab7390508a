"""The qrels and runs named on the command line, read and evaluated: what
``sklearn-rank evaluate`` (:mod:`._evaluate`) and ``sklearn-rank compare``
(:mod:`._compare`) share.

The interface: :func:`add_run_arguments` (the files and the measures, trec_eval's
``-c``, ``-l``, ``-J``, ``--plot``, ``--plugin``), :data:`LABELS_HELP` (what a
name means and how a value is labelled, for the commands' epilogs),
:func:`evaluate_runs` (every measure checked, the files read with progress on
stderr, every run evaluated by :func:`~sklearn_rank.trec.evaluate_run`),
:func:`trec_options` (the options evaluate_run sets from the command line),
:func:`result_labels` (a distinct label for every result) and :func:`curves`
(the metric@k curves ``--plot`` draws).
"""

from __future__ import annotations

import sys

from ._formats import run_names
from ._plugins import add_plugin_option
from ._support import READER, Append, check_stdin, option, real, source

__all__ = ["LABELS_HELP", "add_run_arguments", "curves", "evaluate_runs", "result_labels",
           "trec_options"]

#: What a name means and how a value is labelled (the commands' epilogs).
LABELS_HELP = """\
meaning: a name means the same in every entry point of sklearn_rank. trec_eval's
names (P.10, ndcg_cut.10, recip_rank, gm_map, Rprec) are trec_eval's measures, ties
broken by document id; the package's specs (ndcg@10: gain 2^l-1; map, p@10, mrr,
bpref, ...: tied scores averaged) mean what they mean in evaluate() and the scorers,
so on runs with tied scores -m map can differ from trec_eval's map:
'sklearn-rank trec_eval' is the drop-in where every name is trec_eval's.
labels: a value is labelled with the spelling asked for, canonically written
(-m P.10 -> P_10 as trec_eval prints it, -m p@10 -> p@10, -m precision@10 -> p@10).
files: '-' reads the qrels or one run from standard input."""
_PROGRESS_BYTES = 16 << 20  # files at least this big report reading progress


def add_run_arguments(p) -> None:
    """Add the arguments of the files and the measures to the command's parser ``p``."""
    p.add_argument("qrels", help="qrels file (qid iter docno rel), plain or gzip; '-': "
                                 "standard input")
    p.add_argument("runs", nargs="+", metavar="run",
                   help="run file(s) (qid Q0 docno rank score tag), plain or gzip; '-': "
                        "standard input")
    p.add_argument("-m", "--measure", action=Append, dest="measures", metavar="SPEC",
                   help="measure to compute (repeatable; default: map, P.10, ndcg_cut.10, "
                        "recip_rank)")
    p.add_argument("-c", "--complete", action="store_true",
                   help="average over every judged query; queries the run misses count 0 "
                        "(trec_eval -c)")
    p.add_argument("-l", "--relevance-level", type=real(), default=1.0, metavar="N",
                   help="a document is relevant when its level is >= N (trec_eval -l; "
                        "default 1)")
    p.add_argument("-J", "--judged-only", action="store_true",
                   help="drop unjudged retrieved documents before ranking (trec_eval -J)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw metric@k curves (k = 1..K for each measure with a cut-off "
                        "K) per run into a PNG file (or any format matplotlib writes, by the "
                        "file's extension: .pdf, .svg, ...; needs matplotlib)")
    add_plugin_option(p)


class _Progress:
    """Reading progress on stderr for big files: a live line on a terminal, a
    few lines in a log."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = getattr(stream, "isatty", lambda: False)()
        self.shown = {}

    def __call__(self, name, done, total):
        if total < _PROGRESS_BYTES:
            return
        percent = int(100 * done / max(total, 1))
        last = self.shown.get(name, -100)
        if self.tty:
            self.stream.write(f"\rreading {name}: {percent}%" + ("\n" if done >= total else ""))
        elif percent - last >= 25 or done >= total:
            self.stream.write(f"reading {name}: {percent}%\n")
        else:
            return
        self.shown[name] = percent
        self.stream.flush()


def trec_options(args) -> dict:
    """The options evaluate_run sets from the command line (trec_eval's -l)."""
    return {"threshold": args.relevance_level}


def result_labels(specs, options, trec_names: bool = False) -> dict[str, str]:
    """A distinct label for every result key (``str(spec)``).

    The key itself: the canonical spelling of what was asked for. With
    ``trec_names`` (``--format trec``), trec_eval's name (``ndcg_cut_10``)
    for a spec that is exactly trec_eval's measure under ``options`` (every
    option resolved: gain, ties in trec_eval's order, empty queries,
    threshold). A trec_eval name goes to the first spec that has it, and
    never to a spec when it is another spec's key, so no two results share a
    label; a registry spec whose key trec_eval prints for its own measure
    (``map``, ``ndcg``, ``bpref`` with tied scores averaged) shows its tie
    policy (``map(ties='average')``), so a trec line never gives another
    number under trec_eval's name.
    """
    from ..metrics import MetricSpec
    from ..metrics._vocab.spec import expand_metrics
    from ..metrics._vocab.trec_eval import trec_name
    from ..metrics._vocab.trec_eval_table import MEASURES as TREC_FAMILIES
    from ..trec._evaluate import in_trec_order

    keys = [str(spec) for spec in specs]
    if not trec_names:
        return dict(zip(keys, keys, strict=True))
    labels: dict[str, str] = {}
    for spec, key in zip(specs, keys, strict=True):
        if not isinstance(spec, MetricSpec):  # a trec_eval-engine measure: its own name
            labels[key] = key
            continue
        name = trec_name(spec, options)
        exact = name is not None and in_trec_order(spec, options) and (
            (target := expand_metrics([name])[0]).name == spec.name and target.k == spec.k
            and target.resolve(options) == spec.resolve(options))
        free = name not in labels.values() and (name == key or name not in keys)
        if exact and free:
            labels[key] = name
        elif key in TREC_FAMILIES:  # a registry name trec_eval prints for its own measure
            labels[key] = str(spec.with_options(ties=spec.resolve(options)["ties"]))
        else:
            labels[key] = key
    return labels


def _measures(args) -> list:
    """The measures asked for, each checked on its own (an error names its
    ``-m``), then together (two specs that print alike but differ)."""
    from ..metrics._plan import Plan
    from ..metrics._vocab.spec import expand_metrics
    from ..metrics._vocab.trec_eval_table import engine_item
    from ..trec._evaluate import DEFAULT_MEASURES

    if not args.measures:
        return list(DEFAULT_MEASURES)
    registry = []
    for typed, spec in args.measures_typed:
        with option((typed, spec)):
            if engine_item(spec) is None:  # else the trec_eval engine computes it
                expand_metrics([spec])
                registry.append(spec)
    if not registry:
        return args.measures
    with option((args.measures_typed[0][0], None)):
        specs = expand_metrics(registry)
        options = trec_options(args)  # as evaluate_run sets them
        if not any("threshold" in s.info.params for s in specs):
            del options["threshold"]
        Plan.of(specs, options, caller="evaluate")
    return args.measures


def _check_plot(args) -> None:
    """Refuse a --plot target that cannot be written before the evaluation."""
    if args.plot:
        from .._plots import check_target

        with option(("--plot", args.plot)):
            check_target(args.plot)


def evaluate_runs(args):
    """Read the files and evaluate every run: ``(qrels, runs, names, results)``."""
    from ..trec import read_qrels, read_run

    measures = _measures(args)
    _check_plot(args)
    check_stdin([("qrels", args.qrels), *(("run", path) for path in args.runs)])
    progress = _Progress(sys.stderr)
    with option(("qrels", args.qrels)):
        if _diversity(measures):  # its subtopics (the second field): their reader
            from ..trec import read_subtopic_qrels

            qrels = read_subtopic_qrels(source(args.qrels), engine=READER)
        else:
            qrels = read_qrels(source(args.qrels), progress=progress, engine=READER)
    runs, results = [], []
    for path in args.runs:
        with option(("run", path)):
            runs.append(read_run(source(path), progress=progress, engine=READER))
            results.append(_evaluate(args, qrels, runs[-1], measures))
    return qrels, runs, run_names([r.name for r in runs], args.runs), results


def _diversity(measures) -> bool:
    """Whether an ir_measures diversity measure (alpha_nDCG@k, ...) is asked for."""
    from ..metrics._vocab.ir_measures import DIVERSITY
    from ..metrics._vocab.trec_eval_table import engine_item

    return any((item := engine_item(m)) is not None and item.irm is not None
               and item.irm[0] in DIVERSITY for m in measures)


def _evaluate(args, qrels, run, measures):
    from ..trec import evaluate_run

    return evaluate_run(qrels, run, measures, relevance_level=args.relevance_level,
                        complete=args.complete, judged_only=args.judged_only)


def curves(args, qrels, runs, names, specs, labels):
    """Mean of every metric@k family of ``specs`` for every run."""
    from .._plots import at_k_families

    families = at_k_families(specs, labels)
    # One evaluation per run for all the families: the join and sort once.
    means = [_evaluate(args, qrels, r, [s for _, family in families for s in family]).mean
             for r in runs]
    return [(label, {name: [mean[str(s)] for s in family]
                     for name, mean in zip(names, means, strict=True)})
            for label, family in families]
