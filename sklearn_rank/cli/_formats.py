"""The output formats of ``sklearn-rank evaluate``: a table, trec_eval's lines, JSON, CSV.

Each takes the run names, their evaluations, the label of every result key
(see :func:`._runs.result_labels`) and whether to print every query, and
returns the text. Ids are kept exactly (:data:`IDS_HELP`): the text holds
an id that is not UTF-8 with lone surrogates, which ``_cli_support.write``
writes as the id's bytes and JSON as ``\\udcXX`` escapes; and a query whose
id is ``all`` stays apart from the summary (except in trec_eval's own
lines, where trec_eval prints both as ``all``).
"""

from __future__ import annotations

import math
import os

__all__ = ["FORMATS", "IDS_HELP", "run_names", "runid_line"]

#: What ``sklearn-rank evaluate --help`` says of the ids in each format.
IDS_HELP = """\
ids: query ids and run tags are written exactly as the files hold them: in
trec and csv output an id that is not UTF-8 keeps its bytes (trec is byte for
byte trec_eval's); JSON, which is UTF-8 text, writes each byte that is not
UTF-8 as a lone surrogate escape (0xff as "\\udcff", Python's surrogateescape:
json.loads(...).encode("utf-8", "surrogateescape") gives the bytes back),
which no UTF-8 id can produce; the table, for reading, shows it as \\xff.
all: with -q, trec lines name the summary 'all' (as trec_eval); the table
prints a query as 'measure [qid]' and the summary as 'measure', and csv gives
every row a 'summary' column (1 for the summary, whose qid is 'all'; 0 for a
query), so a query whose id is 'all' stays apart from the summary."""


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
    """(measure, qid, value) in trec_eval's order: queries, then the summary
    (qid None)."""
    for key, label in labels.items():
        if per_query:
            for qid, value in zip(evaluation.qids, evaluation.per_query[key], strict=True):
                yield label, str(qid), float(value)
        yield label, None, evaluation.mean[key]


def _trec_qid(qid: str | None) -> str:
    return "all" if qid is None else qid


def trec(names, results, labels, per_query) -> str:
    lines = []
    for name, evaluation in zip(names, results, strict=True):
        if len(results) > 1:  # what tells the runs' blocks apart
            lines.append(runid_line(name))
        # counts (num_ret, NumQ, ...: trec_eval-engine sums) print as integers
        counts = {labels[str(m)] for m in evaluation.metrics
                  if getattr(m, "summary", None) == "sum" and str(m) in labels}
        lines += [f"{label:<22}\t{_trec_qid(qid)}\t{int(value)}" if label in counts
                  else f"{label:<22}\t{_trec_qid(qid)}\t{value:.4f}"
                  for label, qid, value in _rows(evaluation, labels, per_query)]
    return "\n".join(lines) + "\n"


def table(names, results, labels, per_query) -> str:
    """A column per run, a row per measure (and per query with ``per_query``)."""
    per_run = [list(_rows(ev, labels, per_query)) for ev in results]
    body = []
    for cells in zip(*per_run, strict=True):  # one row per (measure, qid), a column per run
        label, qid, _ = cells[0]
        body.append([label if qid is None else f"{label} [{_readable(qid)}]",
                     *(f"{value:.4f}" for _, _, value in cells)])
    names = [_readable(name) for name in names]
    header = ["measure", *names]
    widths = [max(len(header[j]), *(len(r[j]) for r in body)) for j in range(len(header))]
    lines = [_aligned(header, widths), "  ".join("-" * w for w in widths)]
    lines += [_aligned(r, widths) for r in body]
    n_queries = ", ".join(f"{name}: {ev.n_queries}"
                          for name, ev in zip(names, results, strict=True))
    return "\n".join(lines) + f"\n\nqueries evaluated: {n_queries}\n"


def _readable(text: str) -> str:
    """An id for the table, which people read: a byte that is not UTF-8 (a
    lone surrogate, see the module's doc) as ``\\xff``, which a terminal shows
    (it would draw every such byte as the same replacement character)."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


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
    writer.writerow(["run", "measure", "qid", "value", "summary"])
    for name, evaluation in zip(names, results, strict=True):
        for label, qid, value in _rows(evaluation, labels, per_query):
            writer.writerow([name, label, _trec_qid(qid), repr(value), int(qid is None)])
    return buffer.getvalue()


#: ``--format`` choice -> writer.
FORMATS = {"table": table, "trec": trec, "json": to_json, "csv": to_csv}
