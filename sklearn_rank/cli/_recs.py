"""``sklearn-rank evaluate-recs``: top-k recommendations from CSV or Parquet files."""

from __future__ import annotations

import argparse
import os
import re

from ._support import EPILOG, Append, CommandError, integer, option, real, write

__all__ = ["add_parser", "read_table", "run"]

_EPILOG = f"""\
files: CSV (a header line, comma-separated; .csv, .csv.gz, .tsv for tabs) or
Parquet (.parquet, .pq). In a CSV file the user and item columns are read as
text ('007' stays '007'); equal scores rank by increasing item id (as text).
protocol: each user's items seen in TRAIN are removed before the list is cut
at -k; users of TEST without a recommendation score 0 and are counted; users
without a test item are left out and counted.

{EPILOG}"""

_ROLES = ("RECS", "TEST", "TRAIN")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate-recs",
        help="evaluate top-k recommendations against held-out interactions",
        description=(
            "Evaluate each user's top k recommendations (RECS: user, item, score rows) "
            "against held-out interactions (TEST: user, item[, rating] rows), after "
            "removing the items each user saw in training (--train). Metrics are registry "
            "specs (ndcg, precision, recall, map, mrr, hit_rate, \"p(threshold=4)\", ...; "
            "without @k they get -k) and the list metrics catalog_coverage, gini, entropy, "
            "user_coverage, novelty, arp, tail_share, serendipity."),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("recs", metavar="RECS", help="recommendations: user, item, score")
    p.add_argument("test", metavar="TEST", help="held-out interactions: user, item[, rating]")
    p.add_argument("--train", metavar="TRAIN",
                   help="training interactions: user, item (seen items, popularity, catalog)")
    p.add_argument("-m", "--metric", action=Append, dest="metrics", metavar="SPEC",
                   help="metric (repeatable; default: ndcg, precision, recall, map, mrr, "
                        "hit_rate)")
    p.add_argument("-k", type=integer(1), default=10, help="list length (default 10)")
    p.add_argument("--keep-seen", action="store_true",
                   help="do not remove the training items from the lists")
    p.add_argument("-l", "--threshold", type=real(), default=None, metavar="N",
                   help="an item is relevant when its rating is >= N (default 1)")
    p.add_argument("--user-col", default="user", help="user column (default: user)")
    p.add_argument("--item-col", default="item", help="item column (default: item)")
    p.add_argument("--score-col", default="score", help="score column of RECS (default: "
                                                        "score)")
    p.add_argument("--rating-col", default="rating",
                   help="rating column of TEST (default: rating; without it every test "
                        "item has relevance 1)")
    p.add_argument("-q", "--per-user", action="store_true",
                   help="also print the value of every user")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table (default), json or csv")
    p.set_defaults(func=run, command="evaluate-recs")


def read_table(path: str, id_columns: tuple[str, ...]):
    """A CSV or Parquet file as a pyarrow Table (the ``id_columns`` of a CSV
    file as text), or a pandas DataFrame when pyarrow is not installed."""
    name = os.fspath(path).lower()
    parquet = name.endswith((".parquet", ".pq"))
    delimiter = "\t" if name.endswith((".tsv", ".tsv.gz")) else ","
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        if parquet:
            raise ImportError("Reading Parquet needs pyarrow: pip install pyarrow") from None
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Reading CSV needs pyarrow or pandas: pip install pyarrow"
                              ) from None
        return pd.read_csv(path, sep=delimiter, dtype={c: str for c in id_columns})
    if parquet:
        import pyarrow.parquet as pq

        return pq.read_table(path)
    import pyarrow as pa
    from pyarrow import csv

    return csv.read_csv(
        path, parse_options=csv.ParseOptions(delimiter=delimiter),
        convert_options=csv.ConvertOptions(column_types={c: pa.string() for c in id_columns}))


def _read(args):
    tables = {}
    for role, path in zip(_ROLES, (args.recs, args.test, args.train), strict=True):
        if path is None:
            continue
        with option((role, path)):
            if not os.path.exists(path):
                raise FileNotFoundError(2, "No such file", path)
            tables[role] = read_table(path, (args.user_col, args.item_col))
    return tables


def run(args) -> int:
    from ..recsys import evaluate_recommendations
    from ..recsys._evaluate import DEFAULT_METRICS

    tables = _read(args)
    options = {} if args.threshold is None else {"threshold": args.threshold}
    paths = dict(zip(("recs", "test", "train"), (args.recs, args.test, args.train),
                     strict=True))
    try:
        ev = evaluate_recommendations(
            tables["RECS"], tables["TEST"], train=tables.get("TRAIN"), k=args.k,
            metrics=args.metrics or list(DEFAULT_METRICS), exclude_seen=not args.keep_seen,
            user_col=args.user_col, item_col=args.item_col, score_col=args.score_col,
            rating_col=args.rating_col, **options)
    except Exception as exc:
        from ._support import is_expected, message_of

        if not is_expected(exc):
            raise
        message = message_of(exc)
        role = message.partition(" ")[0].rstrip(":")
        if role in paths:  # the frame an error belongs to: name its file
            message = message.replace(role, f"{role.upper()} file {paths[role]!r}", 1)
        # the options as the command line spells them
        message = re.sub(r"\b(user|item|score|rating)_col=", r"--\1-col", message)
        message = re.sub(r"\bpass k=(\d+)", r"pass -k \1", message)
        raise CommandError(message) from exc
    write(_FORMATS[args.format](ev, args.per_user))
    return 0


def _table(ev, per_user: bool) -> str:
    rows = [(key, f"{ev.mean[key]:.4f}", str(ev.n_empty[key])) for key in ev.mean]
    rows += [(key, f"{value:.4f}", "-") for key, value in ev.system.items()]
    width = max([len("metric"), *(len(r[0]) for r in rows)])
    lines = [f"{'metric':<{width}}  {'value':>8}  {'n_empty':>7}",
             f"{'-' * width}  {'-' * 8}  {'-' * 7}"]
    lines += [f"{name:<{width}}  {value:>8}  {empty:>7}" for name, value, empty in rows]
    if per_user:
        lines.append("")
        lines.append("user\t" + "\t".join(ev.per_query))
        for i, user in enumerate(ev.qids.tolist()):
            lines.append(f"{user}\t" + "\t".join(f"{ev.per_query[k][i]:.4f}"
                                                 for k in ev.per_query))
    lines += ["", f"users evaluated: {ev.n_queries}; k = {ev.k}",
              f"users of TEST without recommendations (scored 0): {ev.n_users_without_recs}",
              f"users with recommendations but no test item (left out): "
              f"{ev.n_users_without_test}"]
    return "\n".join(lines) + "\n"


def _number(value):
    import math

    value = float(value)
    return value if math.isfinite(value) else None


def _json(ev, per_user: bool) -> str:
    import json

    doc = {"k": ev.k, "n_users": ev.n_queries,
           "n_users_without_recs": ev.n_users_without_recs,
           "n_users_without_test": ev.n_users_without_test,
           "mean": {key: _number(value) for key, value in ev.mean.items()},
           "n_empty": {key: int(value) for key, value in ev.n_empty.items()},
           "system": {key: _number(value) for key, value in ev.system.items()}}
    if per_user:
        doc["per_user"] = {key: dict(zip(map(str, ev.qids.tolist()), map(_number, values),
                                         strict=True))
                           for key, values in ev.per_query.items()}
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def _csv(ev, per_user: bool) -> str:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["metric", "user", "value", "summary"])
    for key, values in ev.per_query.items():
        if per_user:
            for user, value in zip(ev.qids.tolist(), values, strict=True):
                writer.writerow([key, user, repr(float(value)), 0])
        writer.writerow([key, "all", repr(float(ev.mean[key])), 1])
    for key, value in ev.system.items():
        writer.writerow([key, "all", repr(float(value)), 1])
    return buffer.getvalue()


_FORMATS = {"table": _table, "json": _json, "csv": _csv}
