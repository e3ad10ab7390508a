"""SVMlight / LightGBM files at the edges: non-finite labels and values, odd
qids, bad query files, empty and broken compressed files. Every error is one
line naming the file (and the line where there is one)."""

import bz2
import gzip
import lzma
import re

import numpy as np
import pytest

from sklearn_rank.datasets import load_svmlight_ranking

GOOD = "1 qid:3 1:1 2:0.5\n"


def _write(path, text, opener=open):
    with opener(path, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    return path


def _fails(path, message, **kwargs):
    """The error is one line: the file's name, then exactly ``message``."""
    with pytest.raises(ValueError) as info:
        load_svmlight_ranking(path, **kwargs)
    text = str(info.value)
    assert "\n" not in text
    assert re.fullmatch(re.escape(str(path)) + message, text), text


# ---------------------------------------------------------------- labels


@pytest.mark.parametrize("label, shown", [("nan", "nan"), ("NaN", "nan"), ("-nan", "nan"),
                                          ("inf", "inf"), ("-Infinity", "-inf"),
                                          ("1e400", "inf")])
def test_non_finite_label_is_refused_with_its_line(tmp_path, label, shown):
    path = _write(tmp_path / "t.txt", GOOD * 2 + f"{label} qid:3 1:1\n" + GOOD)
    _fails(path, rf": line 3: label {shown} is not a finite number \(a relevance grade is "
                 r"needed for every row\)")


def test_nan_label_in_a_lightgbm_file_and_after_comments(tmp_path):
    path = _write(tmp_path / "rank.train", "# header\n\n1 1:1\nnan 1:2 # c\n")
    _write(tmp_path / "rank.train.query", "2\n")
    _fails(path, r": line 4: label nan is not a finite number.*")


def test_first_bad_line_wins_between_label_and_value(tmp_path):
    path = _write(tmp_path / "t.txt", GOOD + "1 qid:3 2:inf\nnan qid:3 1:1\n")
    _fails(path, r": line 2: value of feature 2 is inf .*")
    path = _write(tmp_path / "u.txt", GOOD + "nan qid:3 2:inf\n")
    _fails(path, r": line 2: label nan .*")


# ---------------------------------------------------------------- feature values


def test_nan_feature_values_are_missing_values(tmp_path):
    """Kept as NaN (LightGBM, XGBoost and HistGradientBoosting read NaN as missing)."""
    path = _write(tmp_path / "t.txt", "1 qid:3 1:nan 2:0.5\n0 qid:3 2:NaN 3:1\n")
    X, y, qid = load_svmlight_ranking(path)
    np.testing.assert_array_equal(X.toarray(), [[np.nan, 0.5, 0], [0, np.nan, 1]])
    np.testing.assert_array_equal(y, [1, 0])


@pytest.mark.parametrize("value, shown", [("inf", "inf"), ("-inf", "-inf"), ("1e400", "inf")])
def test_infinite_feature_value_is_refused(tmp_path, value, shown):
    path = _write(tmp_path / "t.txt", GOOD + f"0 qid:3 2:1 5:{value} # doc\n")
    _fails(path, rf": line 2: value of feature 5 is {shown} \(or too large for float64\); "
                 r"feature values must be finite \(NaN is read as a missing value\)")


def test_value_that_overflows_float32(tmp_path):
    path = _write(tmp_path / "t.txt", GOOD + "0 qid:3 3:1e39\n")
    assert load_svmlight_ranking(path)[0][1, 2] == 1e39
    _fails(path, r": line 2: value of feature 3 is inf \(or too large for float32\); .*",
           dtype=np.float32)


# ---------------------------------------------------------------- qids


@pytest.mark.parametrize("token, shown", [("abc", "'abc'"), ("1_000", "'1_000'"),
                                          ("1.0", "'1.0'"), ("", "''"), ("0x1f", "'0x1f'")])
def test_qid_that_is_not_an_integer(tmp_path, token, shown):
    path = _write(tmp_path / "t.txt", GOOD + f"1 qid:{token} 1:1\n")
    _fails(path, rf": line 2: qid {shown} is not an integer")


def test_negative_and_signed_qids_are_ids(tmp_path):
    """An id only groups rows: negative ids are kept as read."""
    path = _write(tmp_path / "t.txt", "1 qid:-3 1:1\n0 qid:-3 1:2\n2 qid:+4 1:3\n"
                                      "1 qid:-9223372036854775808 1:1\n")
    np.testing.assert_array_equal(load_svmlight_ranking(path)[2], [-3, -3, 4, -2**63])


def test_line_without_qid_among_lines_with_qid(tmp_path):
    path = _write(tmp_path / "t.txt", GOOD * 3 + "1 1:1\n" + GOOD)
    _fails(path, r": line 4: missing qid: \(line 1 has one; every line needs one, or none "
                 r"does\)")


# ---------------------------------------------------------------- query files


@pytest.mark.parametrize("sizes, message", [
    ("2\n2\n", "The group sizes in {q} sum to 4 but {p} has 3 rows."),
    ("1\n", "The group sizes in {q} sum to 1 but {p} has 3 rows."),
    ("2\n1\n5\n", "The group sizes in {q} sum to 8 but {p} has 3 rows."),
    ("0\n3\n", "{q}: line 1: group size 0; sizes must be >= 1"),
    ("3\n\n-2\n", "{q}: line 3: group size -2; sizes must be >= 1"),
    ("+3\n", None),
    ("1_0\n", "{q}: line 1: group size '1_0' is not an integer"),
    ("2\n 1 2\n", "{q}: line 2: group size '1 2' is not an integer"),
    ("", "{q}: no group sizes (the query file is empty)."),
    ("\n\n", "{q}: no group sizes (the query file is empty)."),
    ("99999999999999999999\n", "{q}: line 1: group size 99999999999999999999 is too large"),
    ("4611686018427387903\n4611686018427387903\n4611686018427387903\n"
     "4611686018427387903\n7\n", "The group sizes in {q} sum to 18446744073709551619 but {p} "
                                 "has 3 rows."),
])
def test_query_file_problems(tmp_path, sizes, message):
    path = _write(tmp_path / "rank.train", "1 1:1\n0 2:1\n2 1:3\n")
    qpath = _write(tmp_path / "rank.train.query", sizes)
    if message is None:
        np.testing.assert_array_equal(load_svmlight_ranking(path)[2], [0, 0, 0])
        return
    with pytest.raises(ValueError) as info:
        load_svmlight_ranking(path)
    assert str(info.value) == message.format(q=qpath, p=path)


# ---------------------------------------------------------------- empty and broken files


@pytest.mark.parametrize("opener", [open, gzip.open, bz2.open, lzma.open])
def test_empty_file(tmp_path, opener):
    path = _write(tmp_path / "empty.dat", "", opener=opener)
    _fails(path, r": no data lines \(the file is empty or has only comments\)\.")


@pytest.mark.parametrize("opener, kind, errors", [
    (gzip.compress, "gzip", "Compressed file ended before the end-of-stream marker was "
                            "reached"),
    (bz2.compress, "bzip2", "Compressed file ended before the end-of-stream marker was "
                            "reached"),
    (lzma.compress, "xz", "Compressed file ended before the end-of-stream marker was "
                          "reached"),
])
def test_truncated_compressed_file(tmp_path, opener, kind, errors):
    n = 120_000 if kind == "bzip2" else 5000  # bzip2: 2.4 MB, several blocks of 900 kB
    data = opener("".join(f"{i % 5} qid:{i // 10} 1:{i}\n" for i in range(n)).encode())
    path = _write(tmp_path / "train.txt", data[: len(data) // 2])
    with pytest.raises(ValueError) as info:
        load_svmlight_ranking(path)
    text = str(info.value)
    match = re.fullmatch(re.escape(f"{path}: the {kind} data is truncated or corrupt after "
                                   "line ") + r"(\d+) \((.*)\); decompress it again or fetch "
                                              r"a fresh copy\.", text)
    assert match, text
    assert 0 < int(match[1]) < n and match[2] == errors


def test_truncated_gzip_before_the_first_line(tmp_path):
    path = _write(tmp_path / "t.gz", gzip.compress(GOOD.encode())[:12])
    _fails(path, r": the gzip data is truncated or corrupt before the first line \(Compressed "
                 r"file ended before the end-of-stream marker was reached\); .*")


def test_gzip_crc_error(tmp_path):
    data = bytearray(gzip.compress(GOOD.encode() * 10))
    data[-8] ^= 0xFF  # the CRC of the trailer
    path = _write(tmp_path / "t.gz", bytes(data))
    _fails(path, r": the gzip data is truncated or corrupt after line 10 \(CRC check failed "
                 r"0x[0-9a-f]+ != 0x[0-9a-f]+\); decompress it again or fetch a fresh copy\.")


def test_truncated_compressed_query_file(tmp_path):
    path = _write(tmp_path / "rank.train", "1 1:1\n0 2:1\n2 1:3\n")
    data = gzip.compress(b"2\n1\n")
    qpath = _write(tmp_path / "rank.train.query", data[:-4])
    with pytest.raises(ValueError) as info:
        load_svmlight_ranking(path)
    assert str(info.value) == (f"{qpath}: the gzip data is truncated or corrupt after line 2 "
                               "(Compressed file ended before the end-of-stream marker was "
                               "reached); decompress it again or fetch a fresh copy.")


def test_plain_file_io_errors_are_not_disguised(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_svmlight_ranking(tmp_path / "missing.txt")
    with pytest.raises(IsADirectoryError):
        load_svmlight_ranking(tmp_path)
