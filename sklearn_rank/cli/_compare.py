"""``sklearn-rank compare``: runs compared with a baseline, per query (differences,
confidence intervals, paired tests).

The interface is :func:`add_parser` (called by :func:`._evaluate.add_parser`, so
that ``compare`` follows ``evaluate`` in the command list) and :func:`run`. The
runs are read and evaluated as ``evaluate`` does (:mod:`._runs`); the report is
:func:`sklearn_rank.stats.compare`'s.
"""

from __future__ import annotations

import argparse
import os
import sys

from ._plugins import load_plugins
from ._runs import (
    LABELS_HELP,
    add_run_arguments,
    curves,
    evaluate_runs,
    result_labels,
    trec_options,
)
from ._support import EPILOG, CommandError, integer, option, real, write

__all__ = ["add_parser", "read_segments", "run"]

_EPILOG = f"""\
{LABELS_HELP}

{EPILOG}"""


def add_parser(subparsers) -> None:
    """Add ``compare`` to the command line's ``subparsers``."""
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
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_arguments(c)
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
    c.add_argument("--segments", metavar="FILE",
                   help="query segments: lines 'QUERY SEGMENT' (whitespace-separated; "
                        "blank lines and lines starting with '#' skipped); adds the "
                        "comparison within each segment, corrected across segments x "
                        "runs x measures. Every query of the runs needs a segment")
    c.add_argument("--worst", metavar="K", type=integer(1),
                   help="list the K queries where each run loses most to the baseline, "
                        "per measure, with both values")
    c.add_argument("--approximation", choices=("auto", "normal", "none"), default="auto",
                   help="the randomization test and the bootstrap from 50,000 queries "
                        "(auto, the default): their normal approximation with its "
                        "Edgeworth term (normal: always; none: resample)")
    c.set_defaults(func=run, command="compare")


def run(args) -> int:
    """Run ``sklearn-rank compare`` with the parsed ``args``; the exit status."""
    if len(args.runs) < 2:
        raise CommandError("give at least two runs to compare")
    load_plugins(args.plugins)
    qrels, runs, names, results = evaluate_runs(args)
    labels = result_labels(results[0].metrics, trec_options(args))
    by_name = dict(zip(names, results, strict=True))
    baseline = _baseline(args.baseline, names, [r.name for r in runs], args.runs)
    report, shown, worst = _compared(args, by_name, baseline)
    if args.plot:
        from .._plots import save_figure

        with option(("--plot", args.plot)):
            metric = report.metrics[0]  # what Report.plot draws, one panel per system
            comparisons = {c.system: c for c in report.comparisons if c.metric == metric}
            save_figure(args.plot, curves(args, qrels, runs, names, results[0].metrics,
                                          labels),
                        (labels.get(metric, metric), report.differences[metric]), baseline,
                        comparisons)
    render = {"text": str, "markdown": lambda r: r.to_markdown(),
              "latex": lambda r: r.to_latex()}[args.format]
    parts = [render(shown), *(render(w) for w in worst)]
    write("\n\n".join(part.rstrip("\n") for part in parts) + "\n")
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _compared(args, by_name: dict, baseline: str):
    """``(report, shown, worst)``: compare()'s report (what --plot draws), what
    is printed (the report, or compare_segments' with --segments, which lists
    the worst queries itself), and the worst-query lists printed after it."""
    from ..stats import compare, compare_segments, worst_queries

    settings = dict(baseline=baseline, test=args.test,
                    correction=None if args.correction == "none" else args.correction,
                    alpha=args.alpha, n_resamples=args.resamples, missing=args.missing,
                    random_state=args.seed, approximation=args.approximation)
    segments = read_segments(args.segments) if args.segments else None
    with option(*([("--missing", "raise")] if args.missing == "raise" else []),
                *([("--segments", args.segments)] if segments is not None else [])):
        if segments is not None:
            shown = compare_segments(by_name, segments, worst=args.worst, **settings)
            return shown.overall, shown, []
        report = compare(by_name, **settings)
        worst = [worst_queries(by_name[c.system], by_name[baseline], metric=c.metric,
                               k=args.worst, missing=args.missing, names=(c.system, baseline))
                 for c in report.comparisons] if args.worst else []
    return report, report, worst


def read_segments(path: str) -> dict:
    """``{query id: segment}`` from ``--segments FILE``: lines ``QUERY SEGMENT``
    (the segment is the rest of the line, stripped); blank lines and ``#``
    comments skipped; an error naming the file and line for a line without a
    segment or a query given two segments."""
    segments, where = {}, {}
    with option(("--segments", path)), open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            fields = text.split(None, 1)
            if len(fields) < 2:
                raise CommandError(f"{path}:{number}: {text!r} has no segment; each line "
                                   "is 'QUERY SEGMENT'", ("--segments", path))
            qid, segment = fields[0], fields[1].strip()
            if segments.get(qid, segment) != segment:
                raise CommandError(
                    f"{path}:{number}: query {qid!r} is in segment {segment!r} here and in "
                    f"{segments[qid]!r} on line {where[qid]}; give each query one segment",
                    ("--segments", path))
            segments[qid], where[qid] = segment, number
    if not segments:
        raise CommandError(f"{path} holds no 'QUERY SEGMENT' line", ("--segments", path))
    return segments


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
