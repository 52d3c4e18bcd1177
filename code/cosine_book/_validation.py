"""Input checks for every public function of the package: one module, one wording.

Every public function validates its input once, through these helpers, and then
calls private helpers that trust it (internal calls skip re-validation). The
messages name the argument, say what was wrong and what was expected.

What is refused, and why:

- masked arrays (``numpy.ma``): ``np.asarray`` silently drops the mask, so a
  result would include entries the caller meant to exclude;
- sparse matrices, where a function needs dense data (only the factorization
  functions accept them, via :func:`as_real_matrix`);
- complex numbers, strings (also numeric strings), objects, dates and ragged
  nested sequences: none of them is a vector of real numbers;
- NaN and infinity, named with the position of the first one.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable
from typing import Any

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "as_float_array",
    "as_float_scalar",
    "as_int_scalar",
    "as_labels",
    "as_real_array",
    "as_real_matrix",
    "nonfinite_error",
]

_KIND_NAMES = {
    "c": "complex",
    "O": "of Python objects",
    "U": "of strings",
    "S": "of bytes",
    "V": "structured",
    "M": "of dates",
    "m": "of time differences",
}


def _refuse_containers(value: Any, name: str, *, allow_sparse: bool = False) -> None:
    """Refuse the inputs that ``np.asarray`` would silently turn into something else."""
    if isinstance(value, np.ma.MaskedArray):
        raise ValueError(
            f"{name} is a masked array; its mask would be ignored. Expected a plain "
            f"array: drop or fill the masked entries first (e.g. {name}.compressed() "
            f"or {name}.filled(0))"
        )
    if scipy.sparse.issparse(value) and not allow_sparse:
        raise ValueError(
            f"{name} is a sparse {type(value).__name__}; expected a dense array "
            f"(convert with {name}.toarray())"
        )
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} is a string ({value!r}); expected an array of numbers")


def _check_dtype(array: NDArray[Any], name: str) -> None:
    kind = array.dtype.kind
    if kind in "biuf":
        return
    if kind == "c":
        raise ValueError(f"{name} is complex; expected real numbers")
    what = _KIND_NAMES.get(kind, f"of dtype {array.dtype}")
    raise ValueError(f"{name} is an array {what} (dtype {array.dtype}); expected real numbers")


def nonfinite_error(array: NDArray[Any], name: str) -> ValueError | None:
    """The error for the first NaN or infinite entry of ``array``, or ``None`` if all are finite.

    Examples
    --------
    >>> print(nonfinite_error(np.array([1.0, np.nan]), "y"))
    y contains NaN (first at flat index 1); expected finite numbers
    >>> nonfinite_error(np.array([1.0, 2.0]), "y") is None
    True
    """
    if array.dtype.kind not in "fc":
        return None  # integers and booleans are always finite
    flat = array.reshape(-1)
    finite = np.isfinite(flat)
    if finite.all():
        return None
    index = int(np.argmin(finite))  # the first False
    kind = "NaN" if np.isnan(flat[index]) else "an infinite value"
    return ValueError(
        f"{name} contains {kind} (first at flat index {index}); expected finite numbers"
    )


def as_real_array(
    value: ArrayLike,
    name: str,
    *,
    ndim: int | None = None,
    finite: bool = True,
    nonempty: bool = True,
) -> NDArray[Any]:
    """``value`` as a NumPy array of real numbers (its own dtype kept), or a clear ``ValueError``.

    Accepts lists, NumPy arrays and anything with ``__array__`` (for example a
    PyTorch CPU tensor or a pandas Series). Integer and boolean dtypes are kept
    as they are, so that callers can treat them exactly.

    Parameters
    ----------
    value : array_like
    name : str
        The argument's name, as the caller knows it (used in messages).
    ndim : int, optional
        Required number of dimensions.
    finite : bool, default True
        Refuse NaN and infinity.
    nonempty : bool, default True
        Refuse an array with no entries.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        For masked arrays, sparse matrices, strings, ragged sequences, complex,
        object, string or date dtypes, a wrong number of dimensions, an empty
        array, or (with ``finite``) NaN or infinity.

    Examples
    --------
    >>> as_real_array([1, 2], "x").dtype.kind
    'i'
    >>> as_real_array([1j], "x")
    Traceback (most recent call last):
    ...
    ValueError: x is complex; expected real numbers
    >>> as_real_array(["1.0", "2.0"], "x")
    Traceback (most recent call last):
    ...
    ValueError: x is an array of strings (dtype <U3); expected real numbers
    >>> as_real_array(np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "x")
    Traceback (most recent call last):
    ...
    ValueError: x is a masked array; its mask would be ignored. ...
    """
    _refuse_containers(value, name)
    try:
        array = np.asarray(value)
    except ValueError as error:
        if "inhomogeneous" in str(error):
            raise ValueError(
                f"{name} is ragged (nested sequences of different lengths); "
                "expected a rectangular array of numbers"
            ) from None
        raise ValueError(f"{name} is not an array of numbers: {error}") from None
    except TypeError as error:
        raise ValueError(f"{name} is not an array of numbers: {error}") from None
    _check_dtype(array, name)
    if ndim is not None and array.ndim != ndim:
        expected = {0: "a scalar", 1: "a 1-D array", 2: "a 2-D array"}.get(ndim, f"{ndim}-D")
        raise ValueError(f"{name} has shape {array.shape}; expected {expected}")
    if nonempty and array.size == 0:
        raise ValueError(f"{name} is empty (shape {array.shape}); expected at least one entry")
    if finite:
        error = nonfinite_error(array, name)
        if error is not None:
            raise error
    return array


def as_float_array(value: ArrayLike, name: str, *, ndim: int | None = None) -> NDArray[np.float64]:
    """:func:`as_real_array` converted to float64 (no copy if it already is).

    Examples
    --------
    >>> as_float_array([1, 2], "x", ndim=1)
    array([1., 2.])
    """
    return as_real_array(value, name, ndim=ndim).astype(np.float64, copy=False)


def as_real_matrix(
    value: Any, name: str, *, allow_sparse: bool = False
) -> NDArray[np.float64] | scipy.sparse.csr_array:
    """A non-empty 2-D float64 matrix of finite real numbers (or a float64 CSR array).

    Parameters
    ----------
    value : array_like or scipy.sparse matrix
    name : str
    allow_sparse : bool, default False
        Accept SciPy sparse matrices and arrays (returned as ``csr_array``).

    Returns
    -------
    ndarray of shape (m, n), or scipy.sparse.csr_array

    Raises
    ------
    ValueError
        As :func:`as_real_array`, and for a sparse input when ``allow_sparse``
        is false, or a sparse input that is complex, not 2-D or not finite.

    Examples
    --------
    >>> as_real_matrix([[1, 2], [3, 4]], "X").dtype
    dtype('float64')
    >>> as_real_matrix([1.0, 2.0], "X")
    Traceback (most recent call last):
    ...
    ValueError: X has shape (2,); expected a 2-D array
    """
    if scipy.sparse.issparse(value) and allow_sparse:
        if value.ndim != 2:
            raise ValueError(f"{name} has {value.ndim} dimensions; expected a 2-D matrix")
        _check_dtype(np.empty(0, dtype=value.dtype), name)
        if value.shape[0] == 0 or value.shape[1] == 0:
            raise ValueError(
                f"{name} has shape {value.shape}; expected at least one row and column"
            )
        matrix = scipy.sparse.csr_array(value, dtype=np.float64)
        error = nonfinite_error(matrix.data, f"{name} (its stored entries)")
        if error is not None:
            raise error
        return matrix
    array = as_real_array(value, name, ndim=2)  # refuses empty matrices too
    return array.astype(np.float64, copy=False)


def as_float_scalar(
    value: Any,
    name: str,
    *,
    positive: bool = False,
    nonnegative: bool = False,
    at_most: float | None = None,
    interval: tuple[float, float] | None = None,
) -> float:
    """A finite real number as a Python float, with optional sign and range checks.

    Examples
    --------
    >>> as_float_scalar(0.5, "lam", positive=True)
    0.5
    >>> as_float_scalar(float("nan"), "lam")
    Traceback (most recent call last):
    ...
    ValueError: lam must be a finite real number; got nan
    >>> as_float_scalar(0, "lam", positive=True)
    Traceback (most recent call last):
    ...
    ValueError: lam must be positive; got 0
    >>> as_float_scalar(1.5, "rho", interval=(0, 1))
    Traceback (most recent call last):
    ...
    ValueError: rho must lie in [0, 1]; got 1.5
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
            value = value.item()
        else:
            raise ValueError(f"{name} must be a real number; got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite real number; got {value!r}")
    if positive and not number > 0:
        raise ValueError(f"{name} must be positive; got {value!r}")
    if nonnegative and not number >= 0:
        raise ValueError(f"{name} must be nonnegative; got {value!r}")
    if at_most is not None and number > at_most:
        raise ValueError(f"{name} must be at most {at_most}; got {value!r}")
    if interval is not None and not interval[0] <= number <= interval[1]:
        low, high = interval
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}]; got {value!r}")
    return number


def as_int_scalar(
    value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """An integer (not a bool, not a float) as a Python int, within optional limits.

    Examples
    --------
    >>> as_int_scalar(3, "k", minimum=1)
    3
    >>> as_int_scalar(2.0, "k")
    Traceback (most recent call last):
    ...
    ValueError: k must be an integer; got 2.0
    >>> as_int_scalar(0, "k", minimum=1, maximum=5)
    Traceback (most recent call last):
    ...
    ValueError: k must be between 1 and 5; got 0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    number = int(value)
    low_ok = minimum is None or number >= minimum
    high_ok = maximum is None or number <= maximum
    if not (low_ok and high_ok):
        if minimum is not None and maximum is not None:
            raise ValueError(f"{name} must be between {minimum} and {maximum}; got {number}")
        if minimum is not None:
            raise ValueError(f"{name} must be at least {minimum}; got {number}")
        raise ValueError(f"{name} must be at most {maximum}; got {number}")
    return number


def as_labels(
    value: ArrayLike, name: str, size: int
) -> tuple[tuple[Hashable, ...], NDArray[np.intp]]:
    """Distinct group labels (sorted) and each observation's index into them.

    Labels may be integers, floats, booleans or strings, but all of one kind:
    ``1`` and ``"1"`` are different labels, and a mixture would be silently
    merged by NumPy's conversion to a common type, so mixtures are refused.
    ``None`` and NaN are missing labels and refused.

    Examples
    --------
    >>> as_labels(["b", "a", "b"], "groups", 3)
    (('a', 'b'), array([1, 0, 1]))
    >>> as_labels([1, "1"], "groups", 2)
    Traceback (most recent call last):
    ...
    ValueError: groups mixes labels of different kinds (int and str); ...
    """
    _refuse_containers(value, name)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufUS":
        # One dtype, so one kind of label: no mixture to detect, no list to build.
        if value.ndim != 1 or value.size != size:
            raise ValueError(
                f"{name} has shape {value.shape} but there are {size} observations; "
                "expected one label per observation"
            )
        if value.dtype.kind == "f" and np.isnan(value).any():
            position = int(np.argmax(np.isnan(value)))
            raise ValueError(
                f"{name} has a missing label (NaN at index {position}); "
                "expected a label for every observation"
            )
        if value.dtype.kind in "biu":
            by_table = _labels_by_table(value)
            if by_table is not None:
                return by_table
        distinct, index = np.unique(value, return_inverse=True)
        return tuple(label.item() for label in distinct), index.reshape(-1).astype(np.intp)
    items = list(value.tolist() if isinstance(value, np.ndarray) else value)
    if len(items) != size:
        raise ValueError(
            f"{name} has {len(items)} labels but there are {size} observations; "
            "expected one label per observation"
        )
    kinds: dict[str, type] = {}
    for position, label in enumerate(items):
        if label is None or (isinstance(label, float) and math.isnan(label)):
            missing = "None" if label is None else "NaN"
            raise ValueError(
                f"{name} has a missing label ({missing} at index {position}); "
                "expected a label for every observation"
            )
        if isinstance(label, (list, tuple, dict, set, np.ndarray)):
            raise ValueError(f"{name} must be 1-D (one label per observation); got {label!r}")
        if isinstance(label, (bool, np.bool_)):
            kind = "bool"  # True == 1 in Python: kept apart from numbers
        elif isinstance(label, (str, np.str_)):
            kind = "str"
        elif isinstance(label, numbers.Number):
            kind = "number"
        else:
            kind = type(label).__name__
        kinds.setdefault(kind, type(label))
    if len(kinds) > 1:
        shown = " and ".join(sorted(t.__name__ for t in kinds.values()))
        raise ValueError(
            f"{name} mixes labels of different kinds ({shown}); expected labels of one kind"
        )
    # Sorted in Python, not through a NumPy string array, which would drop trailing
    # NUL characters and merge "a" with "a\x00".
    distinct = sorted({_native(label) for label in items})
    position = {label: i for i, label in enumerate(distinct)}
    index = np.fromiter((position[_native(label)] for label in items), np.intp, len(items))
    return tuple(distinct), index


def _native(label: Any) -> Any:
    """A NumPy scalar label as the equal Python object (``np.str_("a")`` -> ``"a"``)."""
    return label.item() if isinstance(label, np.generic) else label


# Labels are mapped through a presence table in chunks of this many entries.
_LABEL_CHUNK = 1 << 16
# Largest label range mapped through a table (64 MiB of lookup entries at most).
_LABEL_TABLE_MAX = 1 << 23


def _labels_by_table(value: NDArray[Any]) -> tuple[tuple[Hashable, ...], NDArray[np.intp]] | None:
    """Labels of a 1-D integer or boolean array through a presence table, or None.

    Same result as sorting, without :func:`numpy.unique`'s several sorted copies of
    the whole array (five times the index, measured at 1e8 labels): for labels
    that span a range no wider than about four times their number, each label is
    mapped through a presence table in fixed-size chunks, so the extra memory is
    the returned index. None for a wider range (the caller sorts instead).
    """
    size = value.size
    is_bool = value.dtype.kind == "b"
    work = value.view(np.uint8) if is_bool else value
    low, high = int(work.min()), int(work.max())
    span = high - low + 1
    if span > min(_LABEL_TABLE_MAX, 4 * size + _LABEL_CHUNK):
        return None
    # Offsets from the smallest label, exact: 64-bit unsigned arithmetic for uint64
    # (every value is >= low), signed 64-bit for everything else.
    wide_unsigned = work.dtype.kind == "u" and work.dtype.itemsize == 8
    loop = np.uint64 if wide_unsigned else np.int64
    base = loop(low)
    index = np.empty(size, dtype=np.intp)
    present = np.zeros(span, dtype=bool)
    for start in range(0, size, _LABEL_CHUNK):
        stop = start + _LABEL_CHUNK
        part = index[start:stop]
        np.subtract(work[start:stop], base, out=part, dtype=loop, casting="unsafe")
        present[part] = True
    lookup = np.cumsum(present, dtype=np.intp) - 1
    for start in range(0, size, _LABEL_CHUNK):
        part = index[start : start + _LABEL_CHUNK]
        part[...] = lookup[part]
    offsets = np.flatnonzero(present).tolist()
    labels = tuple(bool(low + k) for k in offsets) if is_bool else tuple(low + k for k in offsets)
    return labels, index


__all__ += ["as_class_labels", "as_feature_matrix"]


def as_feature_matrix(value: ArrayLike, name: str, n_features: int) -> NDArray[np.float64]:
    """A non-empty 2-D float64 matrix of finite real numbers with ``n_features`` columns.

    One row per sample, one column per feature: the input of a model whose
    first layer expects ``n_features`` inputs.

    Parameters
    ----------
    value : array_like
    name : str
        The argument's name, as the caller knows it (used in messages).
    n_features : int
        Required number of columns.

    Returns
    -------
    ndarray of shape (n, n_features), dtype float64

    Raises
    ------
    ValueError
        As :func:`as_real_matrix`, and for a number of columns other than
        ``n_features``.

    Examples
    --------
    >>> as_feature_matrix([[1, 2, 3]], "x", 3)
    array([[1., 2., 3.]])
    >>> as_feature_matrix([[1.0, 2.0]], "x", 3)
    Traceback (most recent call last):
    ...
    ValueError: x has shape (1, 2); expected (n, 3), 3 features per row
    """
    matrix = as_real_matrix(value, name)
    if matrix.shape[1] != n_features:
        raise ValueError(
            f"{name} has shape {matrix.shape}; expected (n, {n_features}), "
            f"{n_features} features per row"
        )
    return matrix


def as_class_labels(
    value: ArrayLike,
    name: str,
    size: int,
    n_classes: int | None = None,
    *,
    max_classes: int | None = None,
) -> NDArray[np.int64]:
    """Integer class labels ``0, 1, ...``, one per row, as an int64 array.

    With ``n_classes``, every label must lie in ``[0, n_classes)``. Without it,
    the classes are ``0 .. max(value)``: the labels must be nonnegative and
    make at most ``max_classes`` classes.

    Parameters
    ----------
    value : array_like
        A 1-D array of integers (any signed or unsigned integer dtype). Floats,
        also whole-number ones, and booleans are refused.
    name : str
        The argument's name, as the caller knows it (used in messages).
    size : int
        Required number of labels (the number of rows they label).
    n_classes : int, optional
        Number of classes; ``None`` to take them from the labels.
    max_classes : int, optional
        Used when ``n_classes`` is None: the largest number of classes the
        labels may make (``max(value) + 1``). Default ``2**63 - 1``, so that
        the number of classes is an int64.

    Returns
    -------
    ndarray of shape (size,), dtype int64

    Raises
    ------
    ValueError
        As :func:`as_real_array` (with ``ndim=1``), and for a non-integer
        dtype, a number of labels other than ``size``, a negative label, a
        label of ``n_classes`` or more, or (without ``n_classes``) labels that
        make more than ``max_classes`` classes.

    Examples
    --------
    >>> as_class_labels(np.array([0, 2, 1], dtype=np.uint8), "y", 3)
    array([0, 2, 1])
    >>> as_class_labels([0.0, 1.0], "y", 2)
    Traceback (most recent call last):
    ...
    ValueError: y must be integer class labels; got dtype float64 (convert ...)
    >>> as_class_labels([0, 1], "y", 3)
    Traceback (most recent call last):
    ...
    ValueError: y has 2 labels; expected 3, one per row
    >>> as_class_labels([0, 3, 1], "y", 3, n_classes=3)
    Traceback (most recent call last):
    ...
    ValueError: y must be integers in [0, 3), one of the 3 classes; got 3 at index 1 ...
    >>> as_class_labels([0, -1], "y", 2)
    Traceback (most recent call last):
    ...
    ValueError: y must be nonnegative integers (classes 0, 1, ...); got -1 at index 1
    >>> as_class_labels([0, 500], "y", 2, max_classes=100)
    Traceback (most recent call last):
    ...
    ValueError: y has the label 500: ... would make 501 classes; expected at most 100
    """
    labels = as_real_array(value, name, ndim=1)
    if labels.dtype.kind not in "iu":
        raise ValueError(
            f"{name} must be integer class labels; got dtype {labels.dtype} "
            "(convert whole-number floats with .astype(int))"
        )
    if labels.shape != (size,):
        raise ValueError(f"{name} has {labels.shape[0]} labels; expected {size}, one per row")
    low, high = int(labels.min()), int(labels.max())
    if n_classes is None:
        if low < 0:
            raise ValueError(
                f"{name} must be nonnegative integers (classes 0, 1, ...); "
                f"got {low} at index {int(np.argmin(labels))}"
            )
        cap = np.iinfo(np.int64).max if max_classes is None else max_classes
        if high >= cap:
            raise ValueError(
                f"{name} has the label {high}: the classes are 0 .. max({name}), "
                f"so that would make {high + 1} classes; expected at most {cap}"
            )
    elif low < 0 or high >= n_classes:
        index = int(np.argmax((labels < 0) | (labels >= n_classes)))
        raise ValueError(
            f"{name} must be integers in [0, {n_classes}), one of the {n_classes} classes; "
            f"got {int(labels[index])} at index {index} (labels from {low} to {high})"
        )
    return labels.astype(np.int64, copy=False)
