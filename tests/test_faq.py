"""The FAQ page "Common errors and their fixes" cannot go stale: each section is
titled by (part of) a message, and the message the library gives today still
contains the title's text (``…`` stands for a part that varies). The page's
doctests (tests/test_docs.py) check the full messages; this test names the
library whose wording changed and checks that every section has its reproducer.
"""

import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file
from sklearn.linear_model import Ridge
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

from sklearn_rank.datasets import group_sizes_from_qid, load_svmlight_ranking, make_ranking
from sklearn_rank.estimators import QueryRanker
from sklearn_rank.metrics import ndcg_score
from sklearn_rank.model_selection import QueryKFold

lightgbm = pytest.importorskip("lightgbm")

FAQ = Path(__file__).parents[1] / "docs" / "user_guide" / "faq.rst"
X, Y, QID = make_ranking(n_queries=20, random_state=0)
SIZES = group_sizes_from_qid(QID)


def _ranker():
    return lightgbm.LGBMRanker(verbose=-1)


def _svmlight(tmp_path):
    path = str(tmp_path / "train.txt")
    dump_svmlight_file(X, Y, path, query_id=QID)
    load_svmlight_ranking(path)


#: section title -> what raises that message
REPRODUCE = {
    "Should set group for ranking task": lambda _: _ranker().fit(X, Y),
    "Sum of query counts (…) differs from the length of #data (…)":
        lambda _: _ranker().fit(X, Y, group=SIZES[:-1]),
    "The 'scoring' parameter of GridSearchCV must be a str among …":
        lambda _: GridSearchCV(QueryRanker(_ranker()), {"estimator__n_estimators": [5]},
                               scoring="ndcg@10").fit(X, Y),
    "ndcg_score was called by a scikit-learn scorer (make_scorer)":
        lambda _: cross_val_score(Ridge(), X, Y, groups=QID, cv=GroupKFold(5),
                                  scoring=make_scorer(ndcg_score, k=10), error_score="raise"),
    "y_true and y_score are 1-D, so the query of each row is unknown":
        lambda _: ndcg_score(Y, X[:, 0]),
    "QueryRanker builds group from query ids":
        lambda _: QueryRanker(_ranker()).fit(X, Y, group=SIZES),
    "X has 588 rows but qid has 20 values":
        lambda _: QueryRanker(_ranker()).fit(X, Y, qid=SIZES),
    "QueryRanker.fit needs the query id of each row of X":
        lambda _: QueryRanker(_ranker()).fit(X, Y),
    "QueryKFold needs at least 5 queries":
        lambda _: list(QueryKFold(5).split(X[:20], Y[:20], qid=QID[:20])),
    "y_score contains … NaN or infinite value(s)":
        lambda _: ndcg_score([1, 0, 2], [0.5, np.nan, 0.1], qid=[1, 1, 2]),
    "y_true has … negative label(s)":
        lambda _: ndcg_score([1, -1, 2], [0.5, 0.2, 0.1], qid=[1, 1, 2]),
    "y has … label(s) that are not non-negative integers":
        lambda _: QueryRanker(_ranker()).fit(X, Y + 0.5, qid=QID),
    "feature index 0 but indices start at 1": _svmlight,
}


def _titles() -> list[str]:
    """The section titles of the page (a line underlined with ``-``)."""
    lines = FAQ.read_text(encoding="utf-8").split("\n")
    return [title for title, under in zip(lines, lines[1:], strict=False)
            if title and re.fullmatch(r"-{3,}", under) and len(under) >= len(title)]


def test_every_section_has_its_reproducer():
    assert sorted(_titles()) == sorted(REPRODUCE)


@pytest.mark.parametrize("title", list(REPRODUCE))
def test_the_quoted_message_is_the_message_given(title, tmp_path):
    with pytest.raises(Exception) as info:  # noqa: PT011 - the message is checked below
        REPRODUCE[title](tmp_path)
    message = str(info.value)
    at = 0
    for part in title.split("…"):
        found = message.find(part.strip(), at)
        assert found >= 0, f"{title!r} is no longer in the message: {message}"
        at = found + len(part.strip())


def test_lightgbm_still_gives_the_numbers_the_other_way_round():
    # the page says LightGBM prints the number of rows first: 588 rows, sizes sum to 534
    with pytest.raises(lightgbm.basic.LightGBMError,
                       match=r"Sum of query counts \(588\) differs from the length of #data "
                             r"\(534\)"):
        _ranker().fit(X, Y, group=SIZES[:-1])
    assert int(SIZES[:-1].sum()) == 534 and X.shape[0] == 588
