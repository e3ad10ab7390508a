"""The output formats of ``sklearn-rank evaluate``: a table, trec_eval's lines, JSON, CSV.

Each takes the run names, their evaluations, the label of every result key
(see ``_evaluate_cmd._labels``) and whether to print every query, and
returns the text.
"""

from __future__ import annotations

import math
import os

__all__ = ["FORMATS", "run_names", "runid_line"]


def run_names(tags, paths) -> list[str]:
    """The runs' names in the output: their tags, made unique with the file
    names when two runs share one (and with ``#2``, ``#3``, ... when they
    share that too)."""
    names = list(tags)
    if len(set(names)) < len(names):
        names = [f"{name} ({os.path.basename(path)})"
                 for name, path in zip(names, paths, strict=True)]
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return unique


def runid_line(name: str) -> str:
    """The line that opens a run's block in ``--format trec`` output of
    several runs: trec_eval's ``runid`` measure (``-m runid``)."""
    return f"{'runid':<22}\tall\t{name}"


def _rows(evaluation, labels, per_query):
    """(measure, qid or 'all', value) in trec_eval's order: queries, then all."""
    for key, label in labels.items():
        if per_query:
            for qid, value in zip(evaluation.qids, evaluation.per_query[key], strict=True):
                yield label, str(qid), float(value)
        yield label, "all", evaluation.mean[key]


def trec(names, results, labels, per_query) -> str:
    lines = []
    for name, evaluation in zip(names, results, strict=True):
        if len(results) > 1:  # what tells the runs' blocks apart
            lines.append(runid_line(name))
        # counts (num_ret, NumQ, ...: trec_eval-engine sums) print as integers
        counts = {labels[str(m)] for m in evaluation.metrics
                  if getattr(m, "summary", None) == "sum" and str(m) in labels}
        lines += [f"{label:<22}\t{qid}\t{int(value)}" if label in counts
                  else f"{label:<22}\t{qid}\t{value:.4f}"
                  for label, qid, value in _rows(evaluation, labels, per_query)]
    return "\n".join(lines) + "\n"


def table(names, results, labels, per_query) -> str:
    """A column per run, a row per measure (and per query with ``per_query``)."""
    per_run = [list(_rows(ev, labels, per_query)) for ev in results]
    body = []
    for cells in zip(*per_run, strict=True):  # one row per (measure, qid), a column per run
        label, qid, _ = cells[0]
        body.append([label if qid == "all" else f"{label} [{qid}]",
                     *(f"{value:.4f}" for _, _, value in cells)])
    header = ["measure", *names]
    widths = [max(len(header[j]), *(len(r[j]) for r in body)) for j in range(len(header))]
    lines = [_aligned(header, widths), "  ".join("-" * w for w in widths)]
    lines += [_aligned(r, widths) for r in body]
    n_queries = ", ".join(f"{name}: {ev.n_queries}"
                          for name, ev in zip(names, results, strict=True))
    return "\n".join(lines) + f"\n\nqueries evaluated: {n_queries}\n"


def _aligned(cells, widths) -> str:
    """The first cell left-aligned, the values right-aligned."""
    return "  ".join(c.ljust(w) if j == 0 else c.rjust(w)
                     for j, (c, w) in enumerate(zip(cells, widths, strict=True)))


def _number(value) -> float | None:
    """A value for JSON: None (null) for NaN, which JSON has no spelling for."""
    value = float(value)
    return value if math.isfinite(value) else None


def to_json(names, results, labels, per_query) -> str:
    doc = {}
    for name, evaluation in zip(names, results, strict=True):
        entry = {"n_queries": evaluation.n_queries,
                 "mean": {labels[k]: _number(evaluation.mean[k]) for k in labels},
                 "n_empty": {labels[k]: int(evaluation.n_empty[k]) for k in labels}}
        if per_query:
            entry["per_query"] = {
                labels[k]: dict(zip(map(str, evaluation.qids),
                                    map(_number, evaluation.per_query[k]), strict=True))
                for k in labels}
        doc[name] = entry
    import json  # (here: the other formats' command line does not import it)

    return json.dumps({"runs": doc}, indent=2, allow_nan=False) + "\n"


def to_csv(names, results, labels, per_query) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run", "measure", "qid", "value"])
    for name, evaluation in zip(names, results, strict=True):
        for label, qid, value in _rows(evaluation, labels, per_query):
            writer.writerow([name, label, qid, repr(value)])
    return buffer.getvalue()


#: ``--format`` choice -> writer.
FORMATS = {"table": table, "trec": trec, "json": to_json, "csv": to_csv}
