"""Similarity of rankings and runs without judgments (issue 28 item 5): RBO against the
``rbo`` package's values (pinned: it needs numpy < 2), Webber's own implementation's and
Corsi and Urbano's published values (pinned), brute force on extended lists (with and
without ties), Webber et al.'s definitions worked by hand, Kendall's tau against SciPy, tau_AP and
overlap@k against their definitions written out, and runs query by query."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from sklearn_rank.trec import (
    Run,
    kendall_tau,
    overlap_at_k,
    rank_biased_overlap,
    run_similarity,
    tau_ap,
)

# rbo 0.1.3: RankingSimilarity(list(a), list(b)).rbo_ext(p=p), computed with numpy 1.26
RBO_PACKAGE = [
    ("abcdefg", "bacxyz", 0.5, 0.45625),
    ("abcdefg", "bacxyz", 0.9, 0.5602860000000001),
    ("abcdefg", "bacxyz", 0.98, 0.51595469632),
    ("abcde", "abcde", 0.9, 1.0),
    ("abcdefghij", "jihgfedcba", 0.5, 0.01629154265873016),
    ("abcdefghij", "jihgfedcba", 0.9, 0.5116075656428573),
    ("abcdefghij", "jihgfedcba", 0.98, 0.8780443726553534),
    ("abc", "xyz", 0.9, 0.0),
    ("abcdefgh", "bdfhxy", 0.5, 0.22701822916666667),
    ("abcdefgh", "bdfhxy", 0.9, 0.4897261125000001),
    ("abcdefgh", "bdfhxy", 0.98, 0.5934696220025067),
    ("ab", "ba", 0.9, 0.9),
    ("abcdefghijkl", "axbyczdw", 0.5, 0.7745163690476191),
    ("abcdefghijkl", "axbyczdw", 0.9, 0.573857007142857),
    ("abcdefghijkl", "axbyczdw", 0.98, 0.5163115587688534),
]
NUMBERS = ([str(i) for i in range(30)], [str(i) for i in range(29, 17, -1)])
RBO_PACKAGE_NUMBERS = {0.5: 3.6623404178490315e-07, 0.9: 0.03972208391516224,
                       0.98: 0.2545100341585089}


@pytest.mark.parametrize(("a", "b", "p", "expected"), RBO_PACKAGE)
def test_rbo_ext_equals_the_rbo_package(a, b, p, expected):
    assert rank_biased_overlap(list(a), list(b), p=p) == pytest.approx(expected, rel=1e-12,
                                                                       abs=1e-15)
    assert rank_biased_overlap(list(b), list(a), p=p) == pytest.approx(expected, rel=1e-12,
                                                                       abs=1e-15)


@pytest.mark.parametrize("p", sorted(RBO_PACKAGE_NUMBERS))
def test_rbo_ext_equals_the_rbo_package_on_uneven_lists(p):
    assert rank_biased_overlap(*NUMBERS, p=p) == pytest.approx(RBO_PACKAGE_NUMBERS[p],
                                                               rel=1e-12)


def test_webbers_definitions_worked_by_hand():
    """S = <a b>, T = <b a>, p = 1/2: A_1 = 0, A_2 = 1.
    RBO_min (eq. 11) = (1-p)/p * (sum_d (X_d - X_k)/d p^d - X_k ln(1-p)) = 2 ln 2 - 1;
    RBO_ext (eq. 30) = (1-p)/p * sum_d X_d/d p^d + X_k/k p^k = 1/4 + 1/4;
    every unseen item can only be new: RBO_max = RBO_ext, residual = 3/2 - 2 ln 2."""
    s, t = ["a", "b"], ["b", "a"]
    assert rank_biased_overlap(s, t, p=0.5) == pytest.approx(0.5, rel=1e-12)
    assert rank_biased_overlap(s, t, p=0.5, variant="min") == pytest.approx(
        2 * math.log(2) - 1, rel=1e-12)
    assert rank_biased_overlap(s, t, p=0.5, variant="residual") == pytest.approx(
        1.5 - 2 * math.log(2), rel=1e-12)
    # identical lists of length k: RBO_min = 1 - sum of the weight unseen... the
    # residual is p^k: everything beyond k may or may not agree
    same = list("abcd")
    assert rank_biased_overlap(same, same, p=0.8, variant="residual") == pytest.approx(
        1 - rank_biased_overlap(same, same, p=0.8, variant="min"), rel=1e-12)
    assert rank_biased_overlap(same, same, p=0.8, variant="max") == pytest.approx(1.0)


def _truncated_rbo(s, t, p):
    """(1 - p) sum_{d>=1} p^(d-1) |S_:d & T_:d| / d over the whole (long) lists."""
    total, seen_s, seen_t, overlap = 0.0, set(), set(), 0
    for d in range(1, min(len(s), len(t)) + 1):
        x, y = s[d - 1], t[d - 1]
        seen_s.add(x)
        seen_t.add(y)
        overlap += (x in seen_t) + (y in seen_s) - (x == y)
        total += p ** (d - 1) * overlap / d
    return (1 - p) * total


def _extend(s, t, depth, best):
    """Lists extended to ``depth``: with new items (the least overlap), or with
    the other list's earliest unmatched item (the most)."""
    s, t = list(s), list(t)
    fresh = (f"new{i}" for i in itertools.count())
    for d in range(depth):
        for mine, other in ((s, t), (t, s)):
            if len(mine) > d:
                continue
            candidates = [x for x in other if x not in mine] if best else []
            mine.append(candidates[0] if candidates else next(fresh))
    return s, t


@pytest.mark.parametrize("seed", range(12))
def test_rbo_bounds_equal_brute_force_on_extended_lists(seed):
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(15)]
    s = list(rng.permutation(pool)[: rng.integers(1, 12)])
    t = list(rng.permutation(pool)[: rng.integers(1, 12)])
    p = float(rng.choice([0.5, 0.8, 0.9]))
    depth = 400  # 0.9**400 < 1e-18: the truncation is invisible
    low = _truncated_rbo(*_extend(s, t, depth, best=False), p)
    high = _truncated_rbo(*_extend(s, t, depth, best=True), p)
    assert rank_biased_overlap(s, t, p=p, variant="min") == pytest.approx(low, rel=1e-10,
                                                                          abs=1e-14)
    assert rank_biased_overlap(s, t, p=p, variant="max") == pytest.approx(high, rel=1e-10)
    ext = rank_biased_overlap(s, t, p=p)
    assert low - 1e-12 <= ext <= high + 1e-12


# Corsi and Urbano, "The treatment of ties in rank-biased overlap", SIGIR 2024: rows of the
# test data of their reference implementation (github.com/julian-urbano/sigir2024-rbo,
# rbo/test.csv, rows 1, 2, 4, 5, 6, 10 and 17 of 10,000), variant RBO^w (Webber's ties):
# x, y, p, then ext, min, max, res as published there (15 significant digits). All 10,000
# rows agree to 1e-14. All but row 10 have rankings of different lengths, with ties in both.
CORSI_URBANO_W = [
    ("(i5 i9 i13 i15 i16 i19 i20) (i3 i8)", "i6 (i4 i18) i2 i7 i8 i17 i14 (i11 i12) i1",
     0.958074765324023,
     (0.0816485573277354, 0.0370062754797617, 0.59493569657566, 0.557929421095898)),
    ("i13 (i1 i4 i5 i6)", "i3 i14 i11 (i10 i15) i12 (i6 i9) i4 i2", 0.92238320668128,
     (0.117578490431637, 0.0763135264223449, 0.53999366118093, 0.463680134758586)),
    ("i13 i4 (i1 i2 i5 i6)", "i11 i14 i1 (i5 i6) (i3 i12) i8", 0.936646766367491,
     (0.419724384588563, 0.222485580291386, 0.718444020803497, 0.495958440512111)),
    ("(i4 i7 i15) (i2 i11) i8 i18", "i4 i8 i17 i11 (i2 i3 i5 i7 i9 i13 i14)",
     0.955836875418683,
     (0.601671359995661, 0.310498723372055, 0.820912519608734, 0.510413796236679)),
    ("(i3 i5 i6 i8 i9)", "(i1 i6) (i8 i10) i11 i2 (i3 i4)", 0.946588158477176,
     (0.481477824833812, 0.23269613702392, 0.802226864320287, 0.569530727296368)),
    ("i14 (i5 i12 i16) (i1 i17) (i3 i11) i8", "i12 i3 i17 i9 i8 i4 i15 (i13 i14)",
     0.942991097099648,
     (0.456106059590995, 0.278178268495676, 0.699819136853325, 0.421640868357649)),
    ("(i4 i14) i10 i9 i16 i1 (i11 i21) i7",
     "(i4 i7 i9 i10 i14 i16) i21 (i1 i11) (i3 i6 i17 i18)", 0.980350757903177,
     (0.95731778452095, 0.350742506261885, 0.95731778452095, 0.606575278259065)),
]


def _from_string(text):
    """Corsi and Urbano's notation: items separated by blanks, ties in parentheses."""
    ranking, group = [], None
    for token in text.split():
        if token.startswith("("):
            group = [token[1:]]
        elif group is not None:
            group.append(token.rstrip(")"))
            if token.endswith(")"):
                ranking.append(tuple(group))
                group = None
        else:
            ranking.append(token)
    return ranking


@pytest.mark.parametrize(("x", "y", "p", "expected"), CORSI_URBANO_W,
                         ids=[f"row{i}" for i in (1, 2, 4, 5, 6, 10, 17)])
def test_rbo_with_ties_equals_corsi_and_urbanos_rbo_w(x, y, p, expected):
    x, y = _from_string(x), _from_string(y)
    for variant, value in zip(("ext", "min", "max", "residual"), expected, strict=True):
        assert rank_biased_overlap(x, y, p=p, variant=variant) == pytest.approx(
            value, rel=1e-12, abs=1e-14)
        assert rank_biased_overlap(y, x, p=p, variant=variant) == pytest.approx(
            value, rel=1e-12, abs=1e-14)


def test_rbo_equals_corsi_and_urbanos_worked_example():
    """Their implementation's README (rbo/Python/README.md), ties='w', p=0.95, to 7
    decimals: x = red (blue green) yellow pink, y = (blue red) white (yellow black
    purple) green."""
    x = ["red", ("blue", "green"), "yellow", "pink"]
    y = [("blue", "red"), "white", ("yellow", "black", "purple"), "green"]
    published = {"ext": 0.7068257, "min": 0.3429684, "max": 0.9049857, "residual": 0.5620173}
    for variant, value in published.items():
        assert rank_biased_overlap(x, y, p=0.95, variant=variant) == pytest.approx(
            value, abs=5e-8)


# William Webber's own RBO implementation, rbo_ext of "abc...z" against each ranking (to 6
# decimals), as the Rust port github.com/mpetri/rbo pins it in test_data/uneven_abc.json
# and test_data/permute_abc.json (there the first ranking is the second's letters sorted)
ALPHABET = "abcdefghijklmnopqrstuvwxyz"
WEBBER_EXT = [
    (ALPHABET, "akdwcjomxrubqitenhspyl", 0.1, 0.948509),
    (ALPHABET, "bncxagm", 0.2, 0.105466),
    (ALPHABET, "auzemcwhrtjvbfqxyk", 0.4, 0.772647),
    (ALPHABET, "karfvodcjmwgzlypebunq", 0.9, 0.468431),
    (ALPHABET, "zclx", 0.9, 0.233312),
    (ALPHABET, "hqkexombgaldn", 0.99, 0.775456),
    *((sorted(b), b, p, value) for b, p, value in [
        ("jtnxyzovchmfldbksguqewari", 0.5, 0.000857),
        ("flsjvoqzteacbnwixrhkgymud", 0.99, 0.875941),
    ]),
]


@pytest.mark.parametrize(("a", "b", "p", "expected"), WEBBER_EXT)
def test_rbo_ext_equals_webbers_implementation(a, b, p, expected):
    # his outputs are printed to 6 decimals; they agree within 6.1e-7 on all 1,500 cases
    # of those files (p = 0.99 accumulates up to 1e-7 beyond the rounding)
    assert rank_biased_overlap(list(a), list(b), p=p) == pytest.approx(expected, abs=1e-6)


def _tied_rbo_of_extended(s_groups, t_groups, p, depth, best):
    """Webber's tied RBO, (1 - p) sum_d p^(d-1) 2 X_d / (|S_:d| + |T_:d|), of the
    rankings extended to ``depth`` by :func:`_extend` (each added item at a rank of its
    own); a tie group is wholly in every prefix from the depth it starts at."""
    def starts(groups):
        out, start = [], 0
        for group in groups:
            out.extend([start] * len(group))
            start += len(group)
        return out

    flat_s, flat_t = ([x for g in groups for x in g] for groups in (s_groups, t_groups))
    begin_s, begin_t = starts(s_groups), starts(t_groups)
    ext_s, ext_t = _extend(flat_s, flat_t, depth, best)
    begin_s += list(range(len(flat_s), depth))
    begin_t += list(range(len(flat_t), depth))
    seen_s, seen_t, overlap, total = set(), set(), 0, 0.0
    for d in range(1, depth + 1):
        for items, begins, mine, other in ((ext_s, begin_s, seen_s, seen_t),
                                           (ext_t, begin_t, seen_t, seen_s)):
            for item, begin in zip(items, begins, strict=True):
                if begin == d - 1:
                    mine.add(item)
                    overlap += item in other
        total += p ** (d - 1) * 2 * overlap / (len(seen_s) + len(seen_t))
    return (1 - p) * total


@pytest.mark.parametrize("seed", range(12))
def test_rbo_bounds_with_ties_equal_brute_force_on_extended_lists(seed):
    """Rankings of different lengths with ties: beyond the shorter one's end, its
    unseen items each take a rank of their own while the longer one's tie groups may
    fill its prefix beyond d (the agreement 2 X_d / (d + |L_:d|))."""
    rng = np.random.default_rng(100 + seed)
    pool = [f"d{i}" for i in range(16)]

    def tied(n):
        items = list(rng.permutation(pool)[:n])
        cuts = sorted(set(rng.integers(1, n, size=rng.integers(0, n)).tolist())) if n > 1 else []
        return [tuple(items[i:j]) for i, j in zip([0, *cuts], [*cuts, n], strict=True)]

    s, t = tied(int(rng.integers(1, 7))), tied(int(rng.integers(7, 13)))
    p = float(rng.choice([0.5, 0.8, 0.9]))
    depth = 400  # 0.9**400 < 1e-18: the truncation is invisible
    low = _tied_rbo_of_extended(s, t, p, depth, best=False)
    high = _tied_rbo_of_extended(s, t, p, depth, best=True)
    for a, b in ((s, t), (t, s)):
        assert rank_biased_overlap(a, b, p=p, variant="min") == pytest.approx(
            low, rel=1e-10, abs=1e-14)
        assert rank_biased_overlap(a, b, p=p, variant="max") == pytest.approx(
            high, rel=1e-10)
        assert low - 1e-12 <= rank_biased_overlap(a, b, p=p) <= high + 1e-12


def _tied_agreements(s_groups, t_groups, p):
    """RBO_min with Webber's ties on lists of equal length, straight from the
    definition: prefixes take whole groups that start at or before d."""
    def prefix(groups, d):
        out, start = set(), 0
        for g in groups:
            if start < d:
                out |= set(g)
            start += len(g)
        return out

    n = sum(map(len, s_groups))
    head = 0.0
    for d in range(1, n + 1):
        ps, pt = prefix(s_groups, d), prefix(t_groups, d)
        head += 2 * len(ps & pt) / (len(ps) + len(pt)) * p**d
    x_n = len(prefix(s_groups, n) & prefix(t_groups, n))
    tail = -math.log(1 - p) - sum(p**d / d for d in range(1, n + 1))
    return (1 - p) / p * (head + x_n * tail)


def test_ties_as_webber_defines_them():
    s = ["a", ("b", "c"), "d"]
    t = [("b", "a"), "c", "d"]
    assert rank_biased_overlap(s, t, p=0.7, variant="min") == pytest.approx(
        _tied_agreements([["a"], ["b", "c"], ["d"]], [["b", "a"], ["c"], ["d"]], 0.7),
        rel=1e-12)
    # a tie is not an order: both orders of a tied pair give the same value
    assert rank_biased_overlap(["a", ("b", "c")], ["a", ("c", "b")]) == 1.0
    # without ties, groups of one are the plain items
    assert rank_biased_overlap([("a",), ("b",)], ["b", "a"], p=0.5) == 0.5
    # a tie spanning depth d brings the whole group into the prefix: with S = <x {a b}>,
    # T = <b a x>, A_1 = 0, A_2 = 2 * 2 / (3 + 2), A_3 = 1 (whereas either order of
    # a and b gives A_2 = 1/2)
    p = 0.6
    expected = (1 - p) / p * (0.8 * p**2 + p**3) + p**3  # RBO_ext, eq. 30, X_k/k = 1
    assert rank_biased_overlap(["x", ("a", "b")], ["b", "a", "x"], p=p) == pytest.approx(
        expected, rel=1e-12)


def test_empty_rankings():
    assert rank_biased_overlap([], []) == 1.0
    assert rank_biased_overlap(["a"], []) == 0.0


@pytest.mark.parametrize("seed", range(6))
def test_kendall_tau_is_scipys_on_the_shared_items(seed):
    rng = np.random.default_rng(seed)
    a = list(rng.permutation(12))
    b = list(rng.permutation(12)[:9]) + [100, 101]
    shared = [x for x in a if x in b]
    expected = stats.kendalltau([a.index(x) for x in shared], [b.index(x) for x in shared])
    assert kendall_tau(a, b) == pytest.approx(expected.statistic, rel=1e-12)


def test_kendall_tau_by_hand_and_with_ties():
    assert kendall_tau(["a", "b", "c"], ["b", "a", "c"]) == pytest.approx(1 / 3, rel=1e-12)
    # tau-b with a tie: ranks (0, 1, 1) against (0, 1, 2)
    assert kendall_tau(["a", ("b", "c")], ["a", "b", "c"]) == pytest.approx(
        stats.kendalltau([0, 1, 1], [0, 1, 2]).statistic, rel=1e-12)


def _tau_ap_brute(a, b):
    items = [x for x in a if x in b]
    n = len(items)
    total = 0.0
    for i in range(1, n):
        correct = sum(b.index(items[j]) < b.index(items[i]) for j in range(i))
        total += correct / i
    return 2 / (n - 1) * total - 1


@pytest.mark.parametrize("seed", range(8))
def test_tau_ap_equals_its_definition(seed):
    rng = np.random.default_rng(seed)
    a = [int(x) for x in rng.permutation(10)]
    b = [int(x) for x in rng.permutation(10)[:8]]
    assert tau_ap(a, b) == pytest.approx(_tau_ap_brute(a, b), rel=1e-12)


def test_tau_ap_counts_the_same_on_long_rankings():
    """Beyond 2048 shared items the counts come from a Fenwick tree: the same
    numbers as the n x n comparison."""
    from sklearn_rank.trec import _similarity

    rng = np.random.default_rng(0)
    values = rng.permutation(3000).astype(np.float64)
    dense = np.tril(values[None, :] < values[:, None], -1).sum(axis=1)
    assert _similarity._smaller_before(values).tolist() == dense.tolist()
    b = [int(x) for x in rng.permutation(3000)]
    position_in_b = np.argsort(b)  # a = 0, 1, ..., 2999: item i's place in b
    correct = np.tril(position_in_b[None, :] < position_in_b[:, None], -1).sum(axis=1)
    expected = 2 / 2999 * np.sum(correct[1:] / np.arange(1, 3000)) - 1
    assert tau_ap(list(range(3000)), b) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_tau_ap_weighs_the_top():
    """Yilmaz et al.'s point: a swap at the top costs more than one at the bottom."""
    assert tau_ap([1, 2, 3], [2, 1, 3]) == pytest.approx(0.0, abs=1e-15)
    assert tau_ap([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5, rel=1e-12)
    assert tau_ap(list(range(6)), list(range(6))) == 1.0
    assert tau_ap(list(range(6)), list(range(5, -1, -1))) == -1.0


@pytest.mark.parametrize("k", [1, 2, 3, 5, 20])
def test_overlap_at_k_is_the_jaccard_index_of_the_tops(k):
    a, b = list("abcdefg"), list("cafxyz")
    top_a, top_b = set(a[:k]), set(b[:k])
    assert overlap_at_k(a, b, k=k) == pytest.approx(len(top_a & top_b) / len(top_a | top_b),
                                                    rel=1e-12)


def _run():
    qid = ["q1"] * 4 + ["q2"] * 3 + ["q3"]
    docno = ["d1", "d2", "d3", "d4", "d1", "d2", "d3", "d9"]
    score = [4.0, 3.0, 3.0, 1.0, 1.0, 2.0, 3.0, 1.0]
    return Run(qid, docno, score, "a")


def test_run_similarity_applies_the_kernels_query_by_query_in_trec_eval_order():
    a = _run()
    b = Run.from_dict({"q1": {"d2": 3.0, "d1": 2.0, "d5": 1.0},
                       "q2": {"d3": 1.0, "d1": 0.5}, "q4": {"d1": 1.0}})
    sim = run_similarity(a, b, measures=["rbo", "rbo_min", "rbo_residual", "kendall_tau",
                                         "tau_ap", "overlap"], p=0.8, k=2)
    assert sim.qids.tolist() == ["q1", "q2"]
    assert sim.only_a.tolist() == ["q3"] and sim.only_b.tolist() == ["q4"]
    # q1: d2 and d3 tie at 3.0 -> decreasing docno: d3 before d2 (trec_eval)
    q1_a, q1_b = ["d1", "d3", "d2", "d4"], ["d2", "d1", "d5"]
    q2_a, q2_b = ["d3", "d2", "d1"], ["d3", "d1"]
    for name, kernel in [("rbo", lambda x, y: rank_biased_overlap(x, y, p=0.8)),
                         ("rbo_min", lambda x, y: rank_biased_overlap(x, y, p=0.8,
                                                                      variant="min")),
                         ("rbo_residual", lambda x, y: rank_biased_overlap(
                             x, y, p=0.8, variant="residual")),
                         ("kendall_tau", kendall_tau), ("tau_ap", tau_ap),
                         ("overlap", lambda x, y: overlap_at_k(x, y, k=2))]:
        expected = [kernel(q1_a, q1_b), kernel(q2_a, q2_b)]
        assert sim.per_query[name] == pytest.approx(expected, rel=1e-12)
        assert sim.mean[name] == pytest.approx(np.mean(expected), rel=1e-12)


def test_run_similarity_keeps_ties_when_asked_and_depth_cuts():
    a = _run()
    sim = run_similarity(a, a, measures=["rbo", "kendall_tau"], ties="keep")
    assert sim.per_query["rbo"] == pytest.approx([1.0, 1.0, 1.0])
    tied = run_similarity(a, {"q1": {"d1": 3, "d2": 2, "d3": 1}}, measures=["rbo"],
                          ties="keep", p=0.5)
    assert tied.per_query["rbo"][0] == pytest.approx(
        rank_biased_overlap(["d1", ("d2", "d3"), "d4"], ["d1", "d2", "d3"], p=0.5),
        rel=1e-12)
    top2 = run_similarity(a, a, measures=["overlap"], depth=2, k=5)
    assert top2.per_query["overlap"].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="without ties"):
        run_similarity(a, a, measures=["tau_ap"], ties="keep")


def test_an_undefined_tau_is_nan_and_left_out_of_the_mean():
    a = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0}}
    b = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d1": 1.0, "d7": 0.5}}
    sim = run_similarity(a, b, measures=["kendall_tau"])
    assert np.isnan(sim.per_query["kendall_tau"][1])
    assert sim.mean["kendall_tau"] == -1.0 and sim.n_defined["kendall_tau"] == 1


def test_run_similarity_reads_frames():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "a"],
                          "score": [2.0, 1.0, 1.0]})
    sim = run_similarity(frame, Run.from_frame(frame), measures=["rbo"])
    assert sim.per_query["rbo"].tolist() == [1.0, 1.0]
    assert "RunSimilarity(2 queries: rbo=1.0000)" == repr(sim)


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: run_similarity(_run(), _run(), measures=["ndcg"]), ValueError, "Unknown measures"),
    (lambda: run_similarity(_run(), {"x": {"d": 1.0}}), ValueError, "share no query"),
    (lambda: run_similarity([1, 2], _run()), ValueError, "run_a"),
    (lambda: rank_biased_overlap(["a", "b", "a"], ["a"]), ValueError, "twice"),
    (lambda: rank_biased_overlap([["a"], {"x": 1}], ["a"]), TypeError, "unhashable"),
    (lambda: rank_biased_overlap(["a"], ["a"], p=1.0), ValueError, "p"),
    (lambda: kendall_tau(["a", "b"], ["a", "c"]), ValueError, "at least 2"),
    (lambda: tau_ap(["a", ("b", "c")], ["a", "b", "c"]), ValueError, "without ties"),
    (lambda: overlap_at_k(["a"], ["a"], k=0), ValueError, "k"),
])
def test_bad_input_is_refused(call, error, match):
    with pytest.raises(error, match=match):
        call()
