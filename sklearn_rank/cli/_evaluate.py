"""``sklearn-rank evaluate``: trec_eval-compatible evaluation of TREC runs.

The interface is :func:`add_parser`, which adds ``evaluate`` and then ``compare``
(:mod:`._compare`) to the command line, and :func:`run`. The runs are read and
evaluated by :mod:`._runs`; this module writes the results in the chosen format,
or trec_eval 10.0's output byte for byte (:mod:`._trec_eval`).
"""

from __future__ import annotations

import argparse
import sys

from . import _compare
from ._formats import FORMATS, IDS_HELP
from ._plugins import load_plugins
from ._runs import (
    LABELS_HELP,
    add_run_arguments,
    curves,
    evaluate_runs,
    result_labels,
    trec_options,
)
from ._support import EPILOG, CommandError, integer, option, write

__all__ = ["add_parser", "run"]

_EPILOG = f"""\
trec: with --format trec and only trec_eval measures or sets (or no -m: its
'official' set), -m has trec_eval 10.0's grammar and meaning (P = P_5..P_1000,
ndcg_cut.10,20, ndcg.1=3,2=9, all_trec, ...) and the output is the binary's,
byte for byte (as 'sklearn-rank trec_eval', which takes trec_eval's own
arguments); a judged query missing from the run is then an error without -c.
With several runs, each run's lines start with the line trec_eval's runid
measure prints ('runid  all  TAG'; with -n too), which tells the runs apart.
{LABELS_HELP}
Only trec lines print trec_eval's name for a spec that is exactly trec_eval's measure.
json: a value that is not a number (empty='nan') is written as null.
{IDS_HELP}

{EPILOG}"""


def add_parser(subparsers) -> None:
    """Add ``evaluate``, then ``compare``, to the command line's ``subparsers``."""
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
    add_run_arguments(p)
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
    _compare.add_parser(subparsers)


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
    """Run ``sklearn-rank evaluate`` with the parsed ``args``; the exit status."""
    load_plugins(args.plugins)
    if _trec_eval_output(args):
        return 0
    _check_trec_only(args)
    qrels, runs, names, results = evaluate_runs(args)
    labels = result_labels(results[0].metrics, trec_options(args), args.format == "trec")
    if args.plot:
        from .._plots import save_figure

        with option(("--plot", args.plot)):
            save_figure(args.plot, curves(args, qrels, runs, names, results[0].metrics,
                                          labels))
    write(FORMATS[args.format](names, results, labels, args.per_query))
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0
