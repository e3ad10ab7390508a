"""``sklearn-rank evaluate``: trec_eval-compatible evaluation of TREC runs."""

from __future__ import annotations

import argparse
import os
import sys

from ._formats import FORMATS, IDS_HELP, run_names
from ._plugins import add_plugin_option, load_plugins
from ._support import (
    EPILOG,
    READER,
    Append,
    CommandError,
    check_stdin,
    integer,
    option,
    real,
    source,
    write,
)

__all__ = ["add_parser", "run", "run_compare"]

_LABELS = """\
meaning: a name means the same in every entry point of sklearn_rank. trec_eval's
names (P.10, ndcg_cut.10, recip_rank, gm_map, Rprec) are trec_eval's measures, ties
broken by document id; the package's specs (ndcg@10: gain 2^l-1; map, p@10, mrr,
bpref, ...: tied scores averaged) mean what they mean in evaluate() and the scorers,
so on runs with tied scores -m map can differ from trec_eval's map:
'sklearn-rank trec_eval' is the drop-in where every name is trec_eval's.
labels: a value is labelled with the spelling asked for, canonically written
(-m P.10 -> P_10 as trec_eval prints it, -m p@10 -> p@10, -m precision@10 -> p@10).
files: '-' reads the qrels or one run from standard input."""
_EPILOG = f"""\
trec: with --format trec and only trec_eval measures or sets (or no -m: its
'official' set), -m has trec_eval 10.0's grammar and meaning (P = P_5..P_1000,
ndcg_cut.10,20, ndcg.1=3,2=9, all_trec, ...) and the output is the binary's,
byte for byte (as 'sklearn-rank trec_eval', which takes trec_eval's own
arguments); a judged query missing from the run is then an error without -c.
With several runs, each run's lines start with the line trec_eval's runid
measure prints ('runid  all  TAG'; with -n too), which tells the runs apart.
{_LABELS}
Only trec lines print trec_eval's name for a spec that is exactly trec_eval's measure.
json: a value that is not a number (empty='nan') is written as null.
{IDS_HELP}

{EPILOG}"""
_COMPARE_EPILOG = f"""\
{_LABELS}

{EPILOG}"""
_PROGRESS_BYTES = 16 << 20  # files at least this big report reading progress


def _add_common(p) -> None:
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


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="evaluate TREC runs against qrels, as trec_eval does",
        description=(
            "Evaluate one or more TREC run files against a qrels file with trec_eval's "
            "semantics (ties broken by document id, ideal rankings from all judged "
            "documents). Measures are trec_eval names (map, P.10, ndcg_cut.10, "
            "recip_rank, gm_map, Rprec, bpref, recall.100, success.1, set_F, ...), "
            "ir_measures names with ir_measures' meaning (nDCG@10, AP(rel=2), R@100, "
            "Judged@10, RBP(rel=1), ...; case-sensitive) or any metric spec of "
            "sklearn_rank (err@20, rank_eff, \"ndcg(gain='exponential')@10\", ...)."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common(p)
    p.add_argument("-q", "--per-query", action="store_true",
                   help="also print the value of every query")
    p.add_argument("-M", "--max-retrieved", type=integer(0), metavar="N",
                   help="keep only the N best-scored documents of each query (trec_eval -M; "
                        "--format trec with trec_eval measures only)")
    p.add_argument("-n", "--no-summary", action="store_true",
                   help="no summary ('all') lines (trec_eval -n; --format trec with "
                        "trec_eval measures only)")
    p.add_argument("-N", "--docs-in-collection", type=integer(0), default=0, metavar="N",
                   help="number of documents in the collection, for trec_eval's utility "
                        "(trec_eval -N; default 0)")
    p.add_argument("--format", choices=list(FORMATS), default="table",
                   help="table (default), trec (trec_eval's 'measure qid|all value' lines), "
                        "json or csv")
    p.set_defaults(func=run, command="evaluate")

    c = subparsers.add_parser(
        "compare",
        help="compare TREC runs with a baseline: differences, intervals, paired tests",
        description=(
            "Compare runs with a baseline run, per query: mean difference with a bootstrap "
            "confidence interval, a paired test corrected for the number of comparisons, "
            "wins / ties / losses and an effect size, for every measure. The verdict "
            "('beats', 'does not differ significantly') is the test's; where the "
            "interval disagrees with it, the sentence says why."
        ),
        epilog=_COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common(c)
    c.add_argument("--baseline", metavar="NAME",
                   help="the baseline run: its run tag, its file name without extension "
                        "('bm25' for runs/bm25.run), its file name or path (default: the "
                        "first run)")
    c.add_argument("--test", choices=("randomization", "ttest", "wilcoxon"),
                   default="randomization", help="paired test (default: randomization)")
    c.add_argument("--correction", choices=("holm", "bonferroni", "fdr_bh", "none"),
                   default="holm",
                   help="multiple-comparison correction of the p-values: holm (default) or "
                        "bonferroni (family-wise error rate), fdr_bh (Benjamini-Hochberg: "
                        "false discovery rate), none")
    c.add_argument("--alpha", type=real(0, 1), default=0.05,
                   help="significance level (default 0.05)")
    c.add_argument("--resamples", type=integer(2), default=10000,
                   help="randomization / bootstrap resamples (default 10000)")
    c.add_argument("--seed", type=integer(0, 2**32 - 1), default=0,
                   help="seed of the randomization test and the bootstrap (default 0: the "
                        "same report on every run)")
    c.add_argument("--missing", choices=("zero", "drop", "raise"), default="zero",
                   help="a query some run did not retrieve: score it 0 there (default, as "
                        "trec_eval -c), drop it, or stop with an error")
    c.add_argument("--format", choices=("text", "markdown", "latex"), default="text",
                   help="report format (default: text)")
    c.set_defaults(func=run_compare, command="compare")


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


def _trec_options(args) -> dict:
    """The options evaluate_run sets from the command line (trec_eval's -l)."""
    return {"threshold": args.relevance_level}


def _labels(specs, options, trec_names: bool = False) -> dict[str, str]:
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
        options = _trec_options(args)  # as evaluate_run sets them
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


def _evaluate_all(args):
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


def _curves(args, qrels, runs, names, specs, labels):
    """Mean of every metric@k family of ``specs`` for every run."""
    from .._plots import at_k_families

    families = at_k_families(specs, labels)
    # One evaluation per run for all the families: the join and sort once.
    means = [_evaluate(args, qrels, r, [s for _, family in families for s in family]).mean
             for r in runs]
    return [(label, {name: [mean[str(s)] for s in family]
                     for name, mean in zip(names, means, strict=True)})
            for label, family in families]


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _trec_eval_output(args) -> bool:
    """With ``--format trec`` and trec_eval measures only (or none: its
    ``official`` set), trec_eval 10.0's output, byte for byte."""
    from ._trec_eval import is_trec_measure_list, trec_output

    measures = args.measures or []
    if args.format != "trec" or not is_trec_measure_list(measures) or args.plot:
        return False
    level = args.relevance_level
    write(trec_output(args.qrels, args.runs, measures, per_query=args.per_query,
                      complete=args.complete, summary=not args.no_summary,
                      judged_only=args.judged_only,
                      level=int(level) if level == level else 1,
                      max_retrieved=args.max_retrieved, n_docs=args.docs_in_collection))
    return True


def _check_trec_only(args) -> None:
    """Refuse trec_eval's -M and -n where its output is not printed: given
    is ``-M N`` for any N (0 too) and ``-n``."""
    for given, flag in ((args.max_retrieved is not None, "-M"), (args.no_summary, "-n")):
        if given:
            raise CommandError(f"{flag} needs --format trec and trec_eval measures only "
                               "(map, P.10, ndcg_cut.10, official, all_trec, ...)")


def run(args) -> int:
    load_plugins(args.plugins)
    if _trec_eval_output(args):
        return 0
    _check_trec_only(args)
    qrels, runs, names, results = _evaluate_all(args)
    labels = _labels(results[0].metrics, _trec_options(args), args.format == "trec")
    if args.plot:
        from .._plots import save_figure

        with option(("--plot", args.plot)):
            save_figure(args.plot, _curves(args, qrels, runs, names, results[0].metrics,
                                           labels))
    write(FORMATS[args.format](names, results, labels, args.per_query))
    if args.plot:
        _say(f"plot written to {args.plot}")
    return 0


def run_compare(args) -> int:
    from ..stats import compare

    if len(args.runs) < 2:
        raise CommandError("give at least two runs to compare")
    load_plugins(args.plugins)
    qrels, runs, names, results = _evaluate_all(args)
    labels = _labels(results[0].metrics, _trec_options(args))
    by_name = dict(zip(names, results, strict=True))
    baseline = _baseline(args.baseline, names, [r.name for r in runs], args.runs)
    with option(*([("--missing", "raise")] if args.missing == "raise" else [])):
        report = compare(by_name, baseline=baseline, test=args.test,
                         correction=None if args.correction == "none" else args.correction,
                         alpha=args.alpha, n_resamples=args.resamples, missing=args.missing,
                         random_state=args.seed)
    if args.plot:
        from .._plots import save_figure

        with option(("--plot", args.plot)):
            metric = report.metrics[0]  # what Report.plot draws, one panel per system
            comparisons = {c.system: c for c in report.comparisons if c.metric == metric}
            save_figure(args.plot, _curves(args, qrels, runs, names, results[0].metrics,
                                           labels),
                        (labels.get(metric, metric), report.differences[metric]), baseline,
                        comparisons)
    text = {"text": str, "markdown": lambda r: r.to_markdown(),
            "latex": lambda r: r.to_latex()}[args.format](report)
    write(text.rstrip("\n") + "\n")
    if args.plot:
        _say(f"plot written to {args.plot}")
    return 0


def _stem(path: str) -> str:
    """A file's name without its extension (and compression suffix):
    ``runs/bm25.run.gz`` -> ``bm25``."""
    name = os.path.basename(path)
    for suffix in (".gz", ".bz2", ".xz"):
        name = name.removesuffix(suffix)
    return os.path.splitext(name)[0] or name


def _same_file(path: str, other: str) -> bool:
    try:
        return os.path.samefile(path, other)
    except (OSError, ValueError):
        return False


def _baseline(wanted, names, tags, paths) -> str:
    """The report name of the run ``--baseline`` names: by its run tag (or its
    name in the report), else its path, else its file name, else its file
    name's stem; an error when none or several runs match."""
    if wanted is None:
        return names[0]
    ways = (
        ("run tag", lambda i: wanted in (tags[i], names[i])),
        ("path", lambda i: _same_file(paths[i], wanted)),
        ("file name", lambda i: os.path.basename(paths[i]) == wanted),
        ("file name without extension", lambda i: _stem(paths[i]) == wanted),
    )
    for what, matches in ways:
        hits = [i for i in range(len(names)) if matches(i)]
        if len(hits) == 1:
            return names[hits[0]]
        if hits:
            raise CommandError(
                f"--baseline {wanted!r} is the {what} of {len(hits)} runs "
                f"({', '.join(paths[i] for i in hits)}); give the baseline's file path.")
    raise CommandError(
        f"--baseline {wanted!r} is none of the runs: {', '.join(names)}. Name one by its "
        f"run tag, its file name without extension ({', '.join(map(_stem, paths))}), its "
        "file name or its path.")
