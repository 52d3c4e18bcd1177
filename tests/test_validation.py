"""Tests for cosine_book._validation: the one place where input is checked."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given
from hypothesis import strategies as st

from cosine_book._validation import (
    as_class_labels,
    as_feature_matrix,
    as_float_scalar,
    as_int_scalar,
    as_labels,
    as_real_array,
    as_real_matrix,
    nonfinite_error,
)

MASKED = np.ma.masked_array([1.0, 2.0], mask=[False, True])

BAD_INPUTS = [
    (lambda: as_real_array(MASKED, "x"), "x is a masked array"),
    (lambda: as_real_array(scipy.sparse.csr_array(np.eye(2)), "x"), "x is a sparse csr_array"),
    (lambda: as_real_array("12", "x"), "x is a string"),
    (lambda: as_real_array(b"12", "x"), "x is a string"),
    (lambda: as_real_array(["1", "2"], "x"), "x is an array of strings"),
    (lambda: as_real_array([b"1"], "x"), "x is an array of bytes"),
    (lambda: as_real_array(np.array([1, None]), "x"), "x is an array of Python objects"),
    (lambda: as_real_array([[1, 2], [3]], "x"), "x is ragged"),
    (lambda: as_real_array([1 + 2j], "x"), "x is complex"),
    (lambda: as_real_array(np.array(["2020-01-01"], "datetime64[D]"), "x"), "of dates"),
    (lambda: as_real_array(np.array([1], "timedelta64[s]"), "x"), "time differences"),
    (lambda: as_real_array([], "x"), r"x is empty \(shape \(0,\)\)"),
    (lambda: as_real_array([1.0, np.nan], "x"), r"x contains NaN \(first at flat index 1\)"),
    (lambda: as_real_array([[1.0], [-np.inf]], "x"), "x contains an infinite value"),
    (lambda: as_real_array([1.0], "x", ndim=2), r"x has shape \(1,\); expected a 2-D array"),
    (lambda: as_real_array(object(), "x"), "x is an array of Python objects"),
    (lambda: as_real_matrix(np.zeros((0, 3)), "X"), r"X is empty \(shape \(0, 3\)\)"),
    (lambda: as_real_matrix(scipy.sparse.csr_array(np.eye(2)), "X"), "sparse"),
    (
        lambda: as_real_matrix(scipy.sparse.csr_array(np.eye(2) * 1j), "X", allow_sparse=True),
        "X is complex",
    ),
    (
        lambda: as_real_matrix(
            scipy.sparse.csr_array(np.array([[np.nan, 0.0], [0.0, 1.0]])), "X", allow_sparse=True
        ),
        "X \\(its stored entries\\) contains NaN",
    ),
    (lambda: as_float_scalar("1.0", "lam"), "lam must be a real number"),
    (lambda: as_float_scalar(True, "lam"), "lam must be a real number"),
    (lambda: as_float_scalar(1j, "lam"), "lam must be a real number"),
    (lambda: as_float_scalar(np.array([1.0]), "lam"), "lam must be a real number"),
    (lambda: as_float_scalar(float("inf"), "lam"), "lam must be a finite real number"),
    (lambda: as_float_scalar(-1.0, "lam", positive=True), "lam must be positive"),
    (lambda: as_float_scalar(-1.0, "lam", nonnegative=True), "lam must be nonnegative"),
    (lambda: as_float_scalar(2.0, "lam", at_most=1.0), "lam must be at most 1.0"),
    (lambda: as_float_scalar(2.0, "rho", interval=(0, 1)), r"rho must lie in \[0, 1\]"),
    (lambda: as_int_scalar(2.5, "k"), "k must be an integer; got 2.5"),
    (lambda: as_int_scalar(True, "k"), "k must be an integer; got True"),
    (lambda: as_int_scalar("3", "k"), "k must be an integer"),
    (lambda: as_int_scalar(0, "k", minimum=1), "k must be at least 1"),
    (lambda: as_int_scalar(9, "k", maximum=5), "k must be at most 5"),
    (lambda: as_labels([1, "1"], "groups", 2), r"mixes labels of different kinds \(int and str\)"),
    (lambda: as_labels([True, 1], "groups", 2), r"\(bool and int\)"),
    (lambda: as_labels(["a", None], "groups", 2), r"missing label \(None at index 1\)"),
    (lambda: as_labels([1.0, float("nan")], "groups", 2), r"missing label \(NaN at index 1\)"),
    (lambda: as_labels(np.array([1.0, np.nan]), "groups", 2), r"NaN at index 1"),
    (lambda: as_labels(["a", "b"], "groups", 3), "has 2 labels but there are 3 observations"),
    (lambda: as_labels(np.array(["a", "b"]), "groups", 3), "expected one label per observation"),
    (lambda: as_labels([[1], [2]], "groups", 2), "1-D"),
    (lambda: as_labels("ab", "groups", 2), "groups is a string"),
    (lambda: as_feature_matrix([[1.0, 2.0]], "x", 3), r"x has shape \(1, 2\); expected \(n, 3\)"),
    (lambda: as_feature_matrix([1.0, 2.0, 3.0], "x", 3), r"x has shape \(3,\); expected a 2-D"),
    (lambda: as_feature_matrix(np.zeros((0, 3)), "x", 3), r"x is empty \(shape \(0, 3\)\)"),
    (lambda: as_feature_matrix([[1.0, np.inf]], "x", 2), "x contains an infinite value"),
    (lambda: as_feature_matrix(MASKED[None, :], "x", 2), "x is a masked array"),
    (lambda: as_feature_matrix(scipy.sparse.csr_array(np.eye(2)), "x", 2), "x is a sparse"),
    (lambda: as_feature_matrix([[1j, 2.0]], "x", 2), "x is complex"),
    (lambda: as_feature_matrix([["1", "2"]], "x", 2), "x is an array of strings"),
    (lambda: as_class_labels([0.0, 1.0], "y", 2), "integer class labels; got dtype float64"),
    (lambda: as_class_labels([True, False], "y", 2), "integer class labels; got dtype bool"),
    (lambda: as_class_labels([0, np.nan], "y", 2), r"y contains NaN \(first at flat index 1\)"),
    (lambda: as_class_labels(["0", "1"], "y", 2), "y is an array of strings"),
    (lambda: as_class_labels([[0], [1]], "y", 2), r"y has shape \(2, 1\); expected a 1-D array"),
    (lambda: as_class_labels([], "y", 0), "y is empty"),
    (lambda: as_class_labels([0, 1], "y", 3), "y has 2 labels; expected 3, one per row"),
    (lambda: as_class_labels([0, 2, -1], "y", 3), r"nonnegative integers .*got -1 at index 2"),
    (
        lambda: as_class_labels([0, 70_000], "y", 2, max_classes=1 << 16),
        "y has the label 70000: .* would make 70001 classes; expected at most 65536",
    ),
    (
        lambda: as_class_labels(np.array([0, 2**63 - 1], dtype=np.uint64), "y", 2),
        "would make 9223372036854775808 classes; expected at most 9223372036854775807",
    ),
    (
        lambda: as_class_labels([0, 3, 1], "y", 3, n_classes=3),
        r"y must be integers in \[0, 3\), one of the 3 classes; got 3 at index 1 "
        r"\(labels from 0 to 3\)",
    ),
    (
        lambda: as_class_labels([1, -2, 0], "y", 3, n_classes=3),
        r"got -2 at index 1 \(labels from -2 to 1\)",
    ),
]


@pytest.mark.parametrize(("call", "message"), BAD_INPUTS)
def test_bad_input_table(call, message):
    with pytest.raises(ValueError, match=message):
        call()


GOOD_INPUTS = [
    (lambda: as_real_array([True, False], "x").dtype.kind, "b"),
    (lambda: as_real_array(np.int64(2**62), "x", ndim=0).item(), 2**62),
    (lambda: as_real_array([], "x", nonempty=False).size, 0),
    (lambda: as_real_array([np.nan], "x", finite=False).size, 1),
    (lambda: as_real_matrix([[1, 2]], "X").dtype, np.float64),
    (
        lambda: type(as_real_matrix(scipy.sparse.coo_array(np.eye(2)), "X", allow_sparse=True)),
        scipy.sparse.csr_array,
    ),
    (lambda: as_float_scalar(np.float32(0.5), "lam"), 0.5),
    (lambda: as_float_scalar(np.array(2), "lam"), 2.0),
    (lambda: as_int_scalar(np.int8(3), "k"), 3),
    (lambda: as_labels([2, 1, 2], "g", 3)[0], (1, 2)),
    (lambda: as_labels(["1", "10", "1"], "g", 3)[1].tolist(), [0, 1, 0]),
    (lambda: as_labels(["a", "a\x00"], "g", 2)[0], ("a", "a\x00")),  # NumPy strings drop NULs
    (lambda: as_labels([np.int64(2), np.int64(1)], "g", 2)[0], (1, 2)),
    (lambda: nonfinite_error(np.array([1, 2]), "x"), None),
    (lambda: as_feature_matrix([[1, 2]], "x", 2).dtype, np.float64),
    (lambda: as_class_labels(np.array([2, 0], dtype=np.uint8), "y", 2).dtype, np.int64),
    (lambda: as_class_labels([0, 65_535], "y", 2, max_classes=1 << 16).tolist(), [0, 65_535]),
    (lambda: as_class_labels([0, 2], "y", 2, n_classes=3, max_classes=1).tolist(), [0, 2]),
]


@pytest.mark.parametrize(("call", "expected"), GOOD_INPUTS)
def test_valid_inputs(call, expected):
    assert call() == expected


@given(st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=2)), min_size=1, max_size=12))
def test_labels_of_one_kind_are_kept_distinct(labels):
    kinds = {type(label) for label in labels}
    if len(kinds) > 1:
        with pytest.raises(ValueError, match="mixes labels"):
            as_labels(labels, "groups", len(labels))
        return
    distinct, index = as_labels(labels, "groups", len(labels))
    assert len(distinct) == len(set(labels))
    assert [distinct[i] for i in index] == labels


@pytest.mark.parametrize(
    "labels",
    [
        np.array([7, -3, 7, 0], dtype=np.int8),
        np.array([True, False, True]),
        np.array([2**64 - 1, 2**64 - 3, 2**64 - 1], dtype=np.uint64),
        np.array([-(2**63), 2**63 - 1, 0]),  # too wide for the table: sorted instead
        np.random.default_rng(0).integers(-50, 50, size=200_000),  # several chunks
    ],
)
def test_integer_labels_match_sorting(labels):
    distinct, index = as_labels(labels, "g", labels.size)
    expected, expected_index = np.unique(labels, return_inverse=True)
    assert distinct == tuple(expected.tolist())
    assert all(type(label) is type(expected.tolist()[0]) for label in distinct)
    np.testing.assert_array_equal(index, expected_index)
