"""``sklearn-rank evaluate``: trec_eval-compatible evaluation of TREC runs."""

from __future__ import annotations

import json
import os
import sys

__all__ = ["add_parser", "run"]

_FORMATS = ("table", "trec", "json", "csv")
_PROGRESS_BYTES = 16 << 20  # files at least this big report reading progress


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
    p.add_argument("qrels", help="qrels file (qid iter docno rel), plain or gzip")
    p.add_argument("runs", nargs="+", metavar="run",
                   help="run file(s) (qid Q0 docno rank score tag), plain or gzip")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="SPEC",
                   help="measure to compute (repeatable; default: map, P.10, ndcg_cut.10, "
                        "recip_rank)")
    p.add_argument("-q", "--per-query", action="store_true",
                   help="also print the value of every query")
    p.add_argument("-c", "--complete", action="store_true",
                   help="average over every judged query; queries the run misses count 0 "
                        "(trec_eval -c)")
    p.add_argument("-l", "--relevance-level", type=float, default=1.0, metavar="N",
                   help="a document is relevant when its level is >= N (trec_eval -l; "
                        "default 1)")
    p.add_argument("-J", "--judged-only", action="store_true",
                   help="drop unjudged retrieved documents before ranking (trec_eval -J)")
    p.add_argument("--format", choices=_FORMATS, default="table",
                   help="table (default), trec (trec_eval's 'measure qid|all value' lines), "
                        "json or csv")
    p.set_defaults(func=run)


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


def run(args) -> int:
    from .trec import evaluate_run, read_qrels, read_run
    from .trec._evaluate import DEFAULT_MEASURES

    progress = _Progress(sys.stderr)
    measures = args.measures or list(DEFAULT_MEASURES)
    try:
        qrels = read_qrels(args.qrels, progress=progress)
        runs = [read_run(path, progress=progress) for path in args.runs]
        results = [evaluate_run(qrels, r, measures, relevance_level=args.relevance_level,
                                complete=args.complete, judged_only=args.judged_only)
                   for r in runs]
    except (ValueError, TypeError, OSError) as exc:
        message = " ".join(str(exc).split())
        print(f"sklearn-rank evaluate: error: {message}", file=sys.stderr)
        return 2
    names = _names(runs, args.runs)
    labels = _measure_names(results[0], {"convention": "trec_eval"})
    out = {"table": _table, "trec": _trec, "json": _json, "csv": _csv}[args.format]
    sys.stdout.write(out(names, results, labels, args.per_query))
    return 0


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
