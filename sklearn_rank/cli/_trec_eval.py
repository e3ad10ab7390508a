"""``sklearn-rank trec_eval``: trec_eval 10.0's command line, output byte for byte.

``sklearn-rank trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-m M]...
QRELS RUN`` takes trec_eval's arguments as its GNU getopt reads them (grouped
flags ``-qc``, attached values ``-mP.5`` ``-l2``, options after the files,
long forms ``--measure``) and prints what trec_eval 10.0 prints. It is also
what ``sklearn-rank evaluate --format trec`` runs when every ``-m`` is a
trec_eval measure (:func:`is_trec_measure_list`).

Errors are one line on stderr and exit status 2 (trec_eval exits 1, 2, 4 or
7 by the kind of error, and may leave ``-q`` lines on stdout before a
missing query stops it; here nothing is printed then).
"""

from __future__ import annotations

import getopt

from ._support import READER, CommandError, check_stdin, option, source, write

__all__ = ["add_parser", "is_trec_measure_list", "run_argv", "trec_output"]

_SHORT = "qcnJhvol:M:N:m:R:T:D:Z:"
_LONG = ["query_eval_wanted", "complete_rel_info_wanted", "nosummary", "Judged_docs_only",
         "help", "version", "level_for_rel=", "Max_retrieved_per_topic=",
         "Number_docs_in_coll=", "measure=", "Rel_info_format=", "Results_format=",
         "Debug_level=", "Zscore="]
_LONG_TO_SHORT = {"query_eval_wanted": "-q", "complete_rel_info_wanted": "-c",
                  "nosummary": "-n", "Judged_docs_only": "-J", "help": "-h", "version": "-v",
                  "level_for_rel": "-l", "Max_retrieved_per_topic": "-M",
                  "Number_docs_in_coll": "-N", "measure": "-m", "Rel_info_format": "-R",
                  "Results_format": "-T", "Debug_level": "-D", "Zscore": "-Z"}
USAGE = """\
usage: sklearn-rank trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-m MEASURE]... \
QRELS RUN

trec_eval 10.0's command line and output (byte for byte):
  -q            also print every query's values
  -c            evaluate every judged query; one the run lacks gets an empty ranking
  -n            no summary ('all') lines
  -J            drop the unjudged retrieved documents before every measure
  -l N          a document is relevant when its level is >= N (default 1)
  -M N          keep only the N best-scored documents of each query
  -N N          number of documents in the collection (utility)
  -m MEASURE    a measure or a set (official, all_trec, set), with trec_eval's
                parameters: P.5,10  ndcg.1=3,2=9  ndcg_cut.10  utility.1,-1,0,0
                rbp.p=0.8  iprec_at_recall.0.5  (default: official)
"""


def add_parser(subparsers) -> None:
    """List the command in ``sklearn-rank --help`` (its arguments are read
    by :func:`run_argv`, as trec_eval's getopt reads them)."""
    subparsers.add_parser("trec_eval", help="trec_eval 10.0's command line and output, "
                                            "byte for byte (same arguments)",
                          add_help=False)


def _long_int(text: str) -> int:
    from ..metrics._vocab.trec_eval_table import atol

    return atol(text)


def run_argv(argv: list[str]) -> int:
    """Run ``sklearn-rank trec_eval`` with trec_eval's arguments ``argv``."""
    try:
        opts, operands = getopt.gnu_getopt(argv, _SHORT, _LONG)
    except getopt.GetoptError as error:
        raise CommandError(f"{error.msg} (see sklearn-rank trec_eval -h)") from None
    flags: dict = {"measures": []}
    for key, value in opts:
        key = _LONG_TO_SHORT.get(key.lstrip("-"), key)
        if key == "-h":
            write(USAGE)
            return 0
        if key == "-v":
            write("trec_eval version 10.0 (sklearn-rank)\n")
            return 0
        if key == "-m":
            flags["measures"].append(value)
        elif key in ("-R", "-T"):
            if value not in ("qrels", "trec_results"):
                raise CommandError(f"{key} {value}: only the qrels and trec_results formats "
                                   "are supported")
        elif key in ("-D", "-Z"):
            raise CommandError(f"{key} is not supported (trec_eval's debug output and "
                               "z-scores)")
        elif key in ("-l", "-M", "-N"):
            flags[key] = _long_int(value)
        else:
            flags[key] = True
    if len(operands) != 2:
        raise CommandError(f"give exactly two files, QRELS and RUN; got {len(operands)} "
                           "(see sklearn-rank trec_eval -h)")
    write(trec_output(operands[0], [operands[1]], flags["measures"],
                      per_query="-q" in flags, complete="-c" in flags,
                      summary="-n" not in flags, judged_only="-J" in flags,
                      level=flags.get("-l", 1), max_retrieved=flags.get("-M"),
                      n_docs=flags.get("-N", 0)))
    return 0


def is_trec_measure_list(measures) -> bool:
    """Whether every ``-m`` names a trec_eval measure or set (before its ``.``)."""
    from ..metrics._vocab.trec_eval_table import MEASURES, NICKNAMES

    return all(m.partition(".")[0] in MEASURES or m.partition(".")[0] in NICKNAMES
               for m in measures)


def trec_output(qrels_path, run_paths, measures, *, per_query=False, complete=False,
                summary=True, judged_only=False, level=1, max_retrieved=None,
                n_docs=0) -> str:
    """trec_eval's output for each run, one after the other.

    With several runs, each run's block opens with the line trec_eval's
    ``runid`` measure prints (``runid  all  TAG``; the tag made unique with
    the file name when two runs share it), also under ``-n``, and the
    block's own ``runid`` line (``official``, ``-m runid``) is left out: the
    blocks are told apart. One run's output is trec_eval's, byte for byte.
    """
    from ..metrics._vocab.trec_eval_table import TrecEvalError, parse_measures
    from ..trec import read_qrels, read_run
    from ..trec._trec_eval.rankings import ranked
    from ..trec._trec_eval.table import trec_eval

    try:
        parsed = parse_measures(measures)
    except TrecEvalError as error:
        raise CommandError(str(error), ("-m", None)) from None
    check_stdin([("qrels", qrels_path), *(("run", path) for path in run_paths)])
    with option(("qrels", qrels_path)):
        qrels = read_qrels(source(qrels_path), engine=READER)
    blocks, tags = [], []
    for path in run_paths:
        with option(("run", path)):  # (the run is let go once ranked: memory)
            data = ranked(qrels, read_run(source(path), engine=READER),
                          complete=complete, judged_only=judged_only,
                          max_retrieved=max_retrieved)
            result = trec_eval(data, parsed, relevance_level=level, n_docs=n_docs)
        blocks.append(result.lines(per_query=per_query, summary=summary))
        tags.append(data.runid)
    if len(blocks) > 1:  # each block opens with its run's runid line (even with -n)
        from ._formats import run_names, runid_line

        blocks = [[runid_line(name), *(line for line in lines
                                       if line.partition("\t")[0].rstrip() != "runid")]
                  for name, lines in zip(run_names(tags, run_paths), blocks, strict=True)]
    return "".join(line + "\n" for lines in blocks for line in lines)
