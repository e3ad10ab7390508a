"""``sklearn-rank tune``'s report: the text it prints after the search.

Every line fits :data:`WIDTH` columns (a word longer than a line, such as a
long file name, stays whole): the candidates table names its metric columns
briefly and a legend gives each column's spec with its gain and discount.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["WIDTH", "COLUMNS", "wrap", "candidates_table", "summary", "significance",
           "lightgbm_ndcg", "lightgbm_lines"]

#: The widest line ``sklearn-rank tune`` prints (a word longer than that aside).
WIDTH = 100

#: --metric choice -> (short column name, gain and discount in words).
COLUMNS = {
    "ndcg": ("exponential", "gain 2^l-1 of label l, discount 1/log2(r+1) of rank r"),
    "ndcg-linear": ("linear", "gain l, discount 1/log2(r+1)"),
    "ndcg-classic": ("classic", "gain 2^l-1, classic discount 1/max(1, log2 r): ranks 1-2 "
                                "undiscounted"),
}

#: What ``sklearn-rank tune`` calls the ranker it compares the best candidate with.
DEFAULTS = "LightGBM's defaults"


def wrap(text: str, indent: str = "  ") -> str:
    """``text`` in lines of at most :data:`WIDTH` characters, the later ones
    indented by ``indent``; words (file names, specs) are never split, nor
    the words that :func:`together` joined."""
    return "\n".join(textwrap.fill(paragraph, WIDTH, subsequent_indent=indent,
                                   break_long_words=False, break_on_hyphens=False)
                     for paragraph in text.split("\n")).replace(_KEEP, " ")


_KEEP = "\N{NO-BREAK SPACE}"  # a space that textwrap does not break at; wrap() restores it


def together(text: str) -> str:
    """``text`` kept on one line by :func:`wrap` (at most :data:`WIDTH` long)."""
    return text.replace(" ", _KEEP)


def _legend(names: list[str]) -> str:
    """Which spec each short column name stands for, with its gain and discount."""
    short = [column for column, _ in COLUMNS.values()]
    width = max(map(len, short)) + 1
    lines = []
    for column, name, (_, words) in zip(short, names, COLUMNS.values(), strict=True):
        head = f"  {column + ':':<{width}} "
        lines.append(textwrap.fill(f"{name} ({words})", WIDTH, initial_indent=head,
                                   subsequent_indent=" " * len(head),
                                   break_long_words=False, break_on_hyphens=False))
    return "\n".join(lines)


def candidates_table(results, names: list[str], refit: str, folds: int) -> str:
    """One row per candidate, best first; each score is the mean of the fold
    scores ± their standard deviation (the spread over folds), under a short
    column name that the legend below the table spells out."""
    import numpy as np

    params = results["params"]
    keys = list(params[0])
    order = np.argsort(results[f"rank_test_{refit}"], kind="stable")
    header = ["rank", *(k.removeprefix("estimator__") for k in keys)]
    header += [column for column, _ in COLUMNS.values()]
    rows = []
    for i in order:
        cells = [str(results[f"rank_test_{refit}"][i])]
        cells += [str(params[i][k]) for k in keys]
        cells += [f"{results[f'mean_test_{n}'][i]:.4f}±{results[f'std_test_{n}'][i]:.4f}"
                  for n in names]
        rows.append(cells)
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(header)]
    intro = wrap(f"candidates, best {refit} first: per-query NDCG, mean±std of the {folds} "
                 "fold scores (the spread over folds, not a confidence interval; a fold's "
                 "score is the mean over its queries)")
    out = [intro, "  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    out += ["columns (l: a document's label, r: its rank, 1 at the top):", _legend(names)]
    return "\n".join(out)


def summary(ev, names: list[str]) -> str:
    """The per-query scores of the best model on the held-out queries."""
    import numpy as np

    width = max(28, *map(len, names))
    header = f"  {'metric':<{width}} {'mean':>7} {'std':>7} {'min':>7} {'25%':>7} " \
             f"{'median':>7} {'75%':>7} {'max':>7}"
    lines = [header]
    for name in names:
        v = ev.per_query[name]
        q = np.percentile(v, [0, 25, 50, 75, 100])
        lines.append(f"  {name:<{width}} {ev.mean[name]:>7.4f} {v.std():>7.4f} "
                     + " ".join(f"{x:>7.4f}" for x in q))
    return "\n".join(lines)


def _defaults(grid: dict, n_estimators: int, seed: int) -> str:
    """The parameters of the ranker trained with LightGBM's defaults, in words."""
    import lightgbm

    params = lightgbm.LGBMRanker().get_params()
    searched = ", ".join(f"{name}={params[name]!r}"
                         for name in (k.removeprefix("estimator__") for k in grid))
    return (f"{DEFAULTS}: LGBMRanker(n_estimators={n_estimators}, random_state={seed}) "
            f"with LightGBM {lightgbm.__version__}'s default {searched} (and every other "
            "parameter)")


def significance(best, default, metric: str, grid: dict, seed: int, n_estimators: int) -> str:
    """The best candidate against LightGBM's defaults on the held-out queries:
    the difference, its interval and p-value, and wins / ties / losses."""
    from .._utils.text import counted
    from ..stats import compare

    report = compare({DEFAULTS: default, "the best candidate": best},
                     metrics=[metric], correction=None, random_state=seed)
    c = report.comparisons[0]
    queries = counted(c.n_queries, "query", "queries")
    # the counts, the interval and the p-value each on one line
    sentence = re.sub(r"\d+ wins? / \d+ ties? / \d+ loss(es)?|\[[^]]*\]|p [=<] \S+",
                      lambda m: together(m.group()), c.sentence(None, ties=True))
    return wrap(f"significance on the held-out queries: {sentence}\n"
                f"  (paired randomization test on {queries}; "
                f"{_defaults(grid, n_estimators, seed)}, trained on the same rows)")


def lightgbm_ndcg(y, score, qid, k: int) -> float:
    """LightGBM's own ``ndcg@k`` of the scores ``score``: its metric, evaluated
    by LightGBM itself.

    The scores are the initial scores of a LightGBM ``Dataset`` (float64, as
    LightGBM keeps them) of the rows grouped by query (a stable sort: within a
    query the rows keep their order, which LightGBM's stable sort breaks score
    ties by); a ``Booster`` that has trained no tree evaluates its ``ndcg``
    metric at ``eval_at=[k]`` on them, with LightGBM's default
    ``label_gain`` (2^l - 1) and its score of 1 for a query without relevant
    documents. (A trained booster's ``add_valid`` needs the training data's
    bins, which a fitted ``LGBMRanker`` no longer holds.)
    """
    import lightgbm
    import numpy as np

    qid = np.asarray(qid)
    _, inverse = np.unique(qid, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    sizes = np.bincount(inverse)
    rows = np.zeros((qid.shape[0], 1))  # the features play no part: no tree is trained
    data = lightgbm.Dataset(rows, label=np.asarray(y, float)[order], group=sizes,
                            init_score=np.asarray(score, float)[order],
                            params={"verbose": -1})
    booster = lightgbm.Booster({"objective": "lambdarank", "metric": "ndcg", "eval_at": [k],
                                "verbose": -1, "num_threads": 1}, train_set=data)
    (result,) = booster.eval_train()
    return float(result[2])


def lightgbm_lines(y, score, qid, k: int, ev, n_empty: int) -> str:
    """LightGBM's ``ndcg@k`` of the best model beside this package's two, and why
    they differ."""
    from ..metrics import evaluate

    ours, theirs = f"ndcg@{k}", f"ndcg(convention='lightgbm')@{k}"
    same = evaluate(y, score, qid=qid, metrics=[theirs]).mean[theirs]
    rows = [(f"LightGBM's own ndcg@{k} (its metric, computed by LightGBM)",
             lightgbm_ndcg(y, score, qid, k)),
            (f"{theirs} (this package, LightGBM's rules)", same),
            (f"{ours} (this package, the column 'exponential' above)", ev.mean[ours])]
    width = max(len(label) for label, _ in rows)
    empty = "none here" if n_empty == 0 else f"{n_empty} here"
    return "\n".join(
        [f"ndcg@{k} of the best model on the held-out queries, by LightGBM and by this package:"]
        + [f"  {label:<{width}}  {value:.4f}" for label, value in rows]
        + [wrap("They differ where LightGBM's rules differ from this package's: LightGBM "
                f"scores a query without relevant documents 1 ({empty}; this package scores "
                "it 0) and breaks score ties by the rows' order (this package averages over "
                "the orders of tied documents).")])
