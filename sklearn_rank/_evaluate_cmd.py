"""``sklearn-rank evaluate``: trec_eval-compatible evaluation of TREC runs."""

from __future__ import annotations

import json
import os
import sys

__all__ = ["add_parser", "run", "run_compare"]

_FORMATS = ("table", "trec", "json", "csv")
_PROGRESS_BYTES = 16 << 20  # files at least this big report reading progress


def _add_common(p) -> None:
    p.add_argument("qrels", help="qrels file (qid iter docno rel), plain or gzip")
    p.add_argument("runs", nargs="+", metavar="run",
                   help="run file(s) (qid Q0 docno rank score tag), plain or gzip")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="SPEC",
                   help="measure to compute (repeatable; default: map, P.10, ndcg_cut.10, "
                        "recip_rank)")
    p.add_argument("-c", "--complete", action="store_true",
                   help="average over every judged query; queries the run misses count 0 "
                        "(trec_eval -c)")
    p.add_argument("-l", "--relevance-level", type=float, default=1.0, metavar="N",
                   help="a document is relevant when its level is >= N (trec_eval -l; "
                        "default 1)")
    p.add_argument("-J", "--judged-only", action="store_true",
                   help="drop unjudged retrieved documents before ranking (trec_eval -J)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="also draw metric@k curves (k = 1..K for each measure with a cut-off "
                        "K) per run into a PNG file (needs matplotlib)")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="evaluate TREC runs against qrels, as trec_eval does",
        description=(
            "Evaluate one or more TREC run files against a qrels file with trec_eval's "
            "semantics (ties broken by document id, ideal rankings from all judged "
            "documents). Measures are trec_eval names (map, P.10, ndcg_cut.10, "
            "recip_rank, gm_map, Rprec, bpref, recall.100, success.1, set_F, ...) or any "
            "metric spec of sklearn_rank (err@20, rank_eff, "
            "\"ndcg(gain='exponential')@10\", ...)."
        ),
    )
    _add_common(p)
    p.add_argument("-q", "--per-query", action="store_true",
                   help="also print the value of every query")
    p.add_argument("--format", choices=_FORMATS, default="table",
                   help="table (default), trec (trec_eval's 'measure qid|all value' lines), "
                        "json or csv")
    p.set_defaults(func=run)

    c = subparsers.add_parser(
        "compare",
        help="compare TREC runs with a baseline: differences, intervals, paired tests",
        description=(
            "Compare runs with a baseline run, per query: mean difference with a bootstrap "
            "confidence interval, a paired test corrected for the number of comparisons, "
            "wins / ties / losses and an effect size, for every measure."
        ),
    )
    _add_common(c)
    c.add_argument("--baseline", metavar="NAME",
                   help="the baseline run: a run tag or file name (default: the first run)")
    c.add_argument("--test", choices=("randomization", "ttest", "wilcoxon"),
                   default="randomization", help="paired test (default: randomization)")
    c.add_argument("--correction", choices=("holm", "bonferroni", "none"), default="holm",
                   help="multiple-comparison correction (default: holm)")
    c.add_argument("--alpha", type=float, default=0.05,
                   help="significance level (default 0.05)")
    c.add_argument("--resamples", type=int, default=10000,
                   help="randomization / bootstrap resamples (default 10000)")
    c.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    c.add_argument("--missing", choices=("zero", "drop", "raise"), default="zero",
                   help="a query some run did not retrieve: score it 0 there (default, as "
                        "trec_eval -c), drop it, or stop with an error")
    c.add_argument("--format", choices=("text", "markdown", "latex"), default="text",
                   help="report format (default: text)")
    c.set_defaults(func=run_compare)


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


def _names(runs, paths) -> list[str]:
    """Run tags, made unique with the file names when two runs share one."""
    tags = [r.name for r in runs]
    if len(set(tags)) == len(tags):
        return tags
    return [f"{tag} ({os.path.basename(path)})" for tag, path in zip(tags, paths, strict=True)]


def _measure_names(evaluation, options) -> dict[str, str]:
    """Display name of every result key: trec_eval's name when it has one."""
    from .metrics._registry import trec_name

    return {str(spec): trec_name(spec, options) or str(spec) for spec in evaluation.metrics}


def _fail(command: str, exc: Exception) -> int:
    message = " ".join(str(exc).split())
    print(f"sklearn-rank {command}: error: {message}", file=sys.stderr)
    return 2


def _evaluate_all(args):
    """Read the files and evaluate every run: ``(qrels, runs, names, results)``."""
    from .trec import read_qrels, read_run
    from .trec._evaluate import DEFAULT_MEASURES

    progress = _Progress(sys.stderr)
    measures = args.measures or list(DEFAULT_MEASURES)
    qrels = read_qrels(args.qrels, progress=progress)
    runs = [read_run(path, progress=progress) for path in args.runs]
    results = [_evaluate(args, qrels, r, measures) for r in runs]
    return qrels, runs, _names(runs, args.runs), results


def _evaluate(args, qrels, run, measures):
    from .trec import evaluate_run

    return evaluate_run(qrels, run, measures, relevance_level=args.relevance_level,
                        complete=args.complete, judged_only=args.judged_only)


def _curves(args, qrels, runs, names, specs):
    """Mean of every metric@k family of ``specs`` for every run."""
    from ._plots import at_k_families

    families = at_k_families(specs)
    # One evaluation per run for all the families: the join and sort once.
    means = [_evaluate(args, qrels, r, [s for _, family in families for s in family]).mean
             for r in runs]
    return [(label, {name: [mean[str(s)] for s in family]
                     for name, mean in zip(names, means, strict=True)})
            for label, family in families]


def run(args) -> int:
    try:
        qrels, runs, names, results = _evaluate_all(args)
        if args.plot:
            from ._plots import save_figure

            save_figure(args.plot, _curves(args, qrels, runs, names, results[0].metrics))
    except (ValueError, TypeError, OSError, ImportError) as exc:
        return _fail("evaluate", exc)
    labels = _measure_names(results[0], {"convention": "trec_eval"})
    out = {"table": _table, "trec": _trec, "json": _json, "csv": _csv}[args.format]
    sys.stdout.write(out(names, results, labels, args.per_query))
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def run_compare(args) -> int:
    from .stats import compare

    if len(args.runs) < 2:
        print("sklearn-rank compare: error: give at least two runs to compare", file=sys.stderr)
        return 2
    try:
        qrels, runs, names, results = _evaluate_all(args)
        labels = _measure_names(results[0], {"convention": "trec_eval"})
        by_name = dict(zip(names, results, strict=True))
        baseline = _baseline(args.baseline, names, args.runs)
        report = compare(by_name, baseline=baseline, test=args.test,
                         correction=None if args.correction == "none" else args.correction,
                         alpha=args.alpha, n_resamples=args.resamples, missing=args.missing,
                         random_state=args.seed)
        if args.plot:
            from ._plots import save_figure
            from .stats import paired_values

            metric = report.metrics[0]
            differences = {}
            for name in names:
                if name != baseline:
                    x, y, _ = paired_values(by_name[name], by_name[baseline], metric=metric,
                                            missing=args.missing)
                    differences[name] = x - y
            save_figure(args.plot, _curves(args, qrels, runs, names, results[0].metrics),
                        (labels.get(metric, metric), differences), baseline)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        return _fail("compare", exc)
    report = report.relabel(labels)
    text = {"text": str, "markdown": lambda r: r.to_markdown(),
            "latex": lambda r: r.to_latex()}[args.format](report)
    sys.stdout.write(text.rstrip("\n") + "\n")
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _baseline(wanted, names, paths) -> str:
    if wanted is None:
        return names[0]
    for name, path in zip(names, paths, strict=True):
        if wanted in (name, path, os.path.basename(path)):
            return name
    raise ValueError(f"--baseline {wanted!r} is none of the runs: {', '.join(names)}.")


def _rows(evaluation, labels, per_query):
    """(measure, qid or 'all', value) in trec_eval's order: queries, then all."""
    for key, label in labels.items():
        if per_query:
            for qid, value in zip(evaluation.qids, evaluation.per_query[key], strict=True):
                yield label, str(qid), float(value)
        yield label, "all", evaluation.mean[key]


def _trec(names, results, labels, per_query) -> str:
    lines = []
    for name, evaluation in zip(names, results, strict=True):
        if len(results) > 1:
            lines.append(f"{'runid':<22}\tall\t{name}")
        lines += [f"{label:<22}\t{qid}\t{value:.4f}"
                  for label, qid, value in _rows(evaluation, labels, per_query)]
    return "\n".join(lines) + "\n"


def _table(names, results, labels, per_query) -> str:
    per_run = [list(_rows(ev, labels, per_query)) for ev in results]
    body = []
    for cells in zip(*per_run, strict=True):  # one row per (measure, qid), a column per run
        label, qid, _ = cells[0]
        body.append([label if qid == "all" else f"{label} [{qid}]",
                     *(f"{value:.4f}" for _, _, value in cells)])
    header = ["measure", *names]
    widths = [max(len(header[j]), *(len(r[j]) for r in body)) for j in range(len(header))]
    lines = ["  ".join(h.ljust(w) if j == 0 else h.rjust(w)
                       for j, (h, w) in enumerate(zip(header, widths, strict=True)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in body:
        lines.append("  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                               for j, (c, w) in enumerate(zip(r, widths, strict=True))))
    n_queries = ", ".join(f"{name}: {ev.n_queries}" for name, ev in zip(names, results,
                                                                         strict=True))
    return "\n".join(lines) + f"\n\nqueries evaluated: {n_queries}\n"


def _json(names, results, labels, per_query) -> str:
    doc = {}
    for name, evaluation in zip(names, results, strict=True):
        entry = {"n_queries": evaluation.n_queries,
                 "mean": {labels[k]: evaluation.mean[k] for k in labels},
                 "n_empty": {labels[k]: evaluation.n_empty[k] for k in labels}}
        if per_query:
            entry["per_query"] = {
                labels[k]: dict(zip(map(str, evaluation.qids),
                                    map(float, evaluation.per_query[k]), strict=True))
                for k in labels}
        doc[name] = entry
    return json.dumps({"runs": doc}, indent=2) + "\n"


def _csv(names, results, labels, per_query) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run", "measure", "qid", "value"])
    for name, evaluation in zip(names, results, strict=True):
        for label, qid, value in _rows(evaluation, labels, per_query):
            writer.writerow([name, label, qid, repr(value)])
    return buffer.getvalue()
