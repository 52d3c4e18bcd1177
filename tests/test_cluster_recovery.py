"""cosine_book.cluster_recovery: the AUC and top-neighbour share of chapters 6 and 7."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from bad_inputs import masked, with_entry
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from cosine_book.cluster_recovery import cluster_recovery, pair_auc

SETTINGS = settings(max_examples=25, deadline=None)


def same_cluster_matrix(clusters):
    clusters = np.asarray(clusters)
    return (clusters[:, None] == clusters[None, :]).astype(float)


@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_cluster_recovery_auc_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, 3, size=15)
    clusters[:3] = [0, 1, 2]
    S = np.round(rng.standard_normal((15, 15)), 1)  # rounding creates ties
    S = (S + S.T) / 2
    rows, cols = np.triu_indices(15, k=1)
    expected = roc_auc_score(clusters[rows] == clusters[cols], S[rows, cols])
    assert cluster_recovery(S, clusters, 3).auc == pytest.approx(expected, abs=1e-12)
    # pair_auc is scikit-learn's value to the last bit or within one unit in the last place.
    assert abs(pair_auc(S, clusters) - expected) <= np.spacing(expected)
    assert cluster_recovery(S, clusters, 3, auc_bins=4096).auc == pytest.approx(expected, abs=1e-2)


def test_cluster_recovery_neighbour_share():
    clusters = np.array([0, 0, 0, 1, 1, 1])
    truth = cluster_recovery(same_cluster_matrix(clusters), clusters, n_neighbours=2)
    assert (truth.auc, truth.neighbour_share) == (1.0, 1.0)
    # Similarity that prefers the other cluster: no neighbour in the same cluster.
    flipped = 1.0 - same_cluster_matrix(clusters)
    result = cluster_recovery(flipped, clusters, n_neighbours=2)
    assert result.neighbour_share == 0.0 and result.auc == 0.0


def _brute_force_share(S, clusters, k):
    """Average, over every choice of the tied items at the k-th place, of the same-cluster share."""
    shares = []
    for i in range(len(clusters)):
        others = [j for j in range(len(clusters)) if j != i]
        values = sorted((S[i, j] for j in others), reverse=True)
        kth = values[k - 1]
        above = [j for j in others if S[i, j] > kth]
        tied = [j for j in others if S[i, j] == kth]
        picks = [
            sum(clusters[j] == clusters[i] for j in above + list(chosen)) / k
            for chosen in itertools.combinations(tied, k - len(above))
        ]
        shares.append(sum(picks) / len(picks))
    return sum(shares) / len(shares)


def test_neighbour_share_of_equal_similarities_is_the_base_rate_exactly():
    # Chapter 6, setting B, "remedy: standardised X, obj. 2": every similarity is 1.0.
    clusters = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2, 0, 1])
    sizes = np.bincount(clusters)
    base_rate = np.mean((sizes[clusters] - 1) / (len(clusters) - 1))
    for k in (1, 3, 10, 11):
        share = cluster_recovery(np.ones((12, 12)), clusters, n_neighbours=k).neighbour_share
        assert share == base_rate


def test_neighbour_share_splits_a_tie_straddling_the_kth_place():
    clusters = np.array([0, 0, 1, 1, 1])
    S = np.array(
        [
            [1.0, 0.5, 0.9, 0.5, 0.5],
            [0.5, 1.0, 0.5, 0.2, 0.2],
            [0.9, 0.5, 1.0, 0.7, 0.7],
            [0.5, 0.2, 0.7, 1.0, 0.7],
            [0.5, 0.2, 0.7, 0.7, 1.0],
        ]
    )
    # k = 2. Row 0: item 2 (other cluster) is above 0.5; items 1, 3, 4 tie at 0.5 for the
    # one place left and one of them is in cluster 0: share (1/2)(1/3) = 1/6. Row 1: items
    # 0 (same) and 2 tie at 0.5 for both places: 1/2. Row 2: item 0 (other) above, items
    # 3, 4 (same) tie at 0.7 for one place: 1/2. Rows 3, 4: both places go to the
    # same cluster: 1.
    result = cluster_recovery(S, clusters, n_neighbours=2)
    assert result.neighbour_share == pytest.approx((1 / 6 + 1 / 2 + 1 / 2 + 1 + 1) / 5, abs=1e-15)
    assert result.neighbour_share == pytest.approx(_brute_force_share(S, clusters, 2), abs=1e-15)


@SETTINGS
@given(seed=st.integers(0, 10**6), k=st.integers(1, 6))
def test_neighbour_share_averages_over_tie_breaks_and_ignores_item_order(seed, k):
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, 3, size=7)
    clusters[:2] = [0, 1]  # pairs of both kinds, for the AUC
    S = rng.integers(0, 3, size=(7, 7)).astype(float)  # few levels: many ties
    S = S + S.T
    share = cluster_recovery(S, clusters, n_neighbours=k).neighbour_share
    assert share == pytest.approx(_brute_force_share(S, clusters, k), abs=1e-14)
    order = rng.permutation(7)
    permuted = cluster_recovery(S[np.ix_(order, order)], clusters[order], n_neighbours=k)
    assert permuted.neighbour_share == pytest.approx(share, abs=1e-15)
    # The AUC counts pairs with integers: exactly the same in any item order.
    assert permuted.auc == cluster_recovery(S, clusters, n_neighbours=k).auc


@SETTINGS
@given(seed=st.integers(0, 10**6), n_bins=st.integers(2, 50))
def test_binned_auc_counts_pairs_within_one_level_as_ties(seed, n_bins):
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, 3, size=9)
    clusters[:3] = [0, 0, 1]
    S = rng.standard_normal((9, 9))
    S = S + S.T
    assert pair_auc(S, clusters) == cluster_recovery(S, clusters, 2).auc
    # Quantised to n_bins levels, the AUC is the exact AUC of the levels.
    low, high = S[np.triu_indices(9, 1)].min(), S[np.triu_indices(9, 1)].max()
    levels = np.minimum(np.floor((S - low) / ((high - low) / n_bins)), n_bins - 1)
    binned = cluster_recovery(S, clusters, 2, auc_bins=n_bins).auc
    assert binned == pair_auc(levels, clusters)


def test_pair_auc_reads_only_the_upper_triangle_and_any_label_kind():
    S = np.array([[9.0, 0.9, 0.1], [-9.0, 9.0, 0.2], [9.0, 9.0, 9.0]])
    assert pair_auc(S, [0, 0, 1]) == 1.0
    assert pair_auc(S, ["x", "x", "y"]) == pair_auc(S, [True, True, False]) == 1.0
    # A similarity that prefers the other cluster scores 0; a constant one, chance.
    assert pair_auc(-S, [0, 0, 1]) == 0.0
    assert pair_auc(np.zeros((3, 3)), [0, 0, 1]) == 0.5


@pytest.mark.parametrize("scale", [1e-300, 1e300, 2.0**-1070])
def test_pair_auc_at_any_scale(scale):
    # Only the order of the scores matters, and the count is exact at any scale.
    rng = np.random.default_rng(1)
    S = rng.random((12, 12))
    S = S + S.T
    clusters = np.arange(12) % 3
    expected = pair_auc(S, clusters)
    with np.errstate(under="ignore"):
        scaled = S * scale
    if scale < 1e-300:  # subnormal: some distinct scores round together into ties
        assert abs(pair_auc(scaled, clusters) - expected) < 0.1
    else:
        assert pair_auc(scaled, clusters) == expected


# ---------------------------------------------------------------------------
# Bad input: one table for the module
# ---------------------------------------------------------------------------

_S = np.eye(4)
_CLUSTERS = [0, 0, 1, 1]


BAD_INPUT = [
    # (call, expected error-message fragment)
    pytest.param(lambda: cluster_recovery(np.ones((3, 2)), [0, 1, 0]), "square"),
    pytest.param(lambda: cluster_recovery(np.ones((1, 1)), [0]), "p >= 2"),
    pytest.param(lambda: cluster_recovery(with_entry(_S, (0, 1), np.nan), _CLUSTERS), "NaN"),
    pytest.param(lambda: cluster_recovery(masked(_S), _CLUSTERS), "masked"),
    pytest.param(lambda: cluster_recovery(_S, [0, 1, 0]), "3 labels but there are 4"),
    pytest.param(lambda: cluster_recovery(_S, [0, "0", 1, 1]), "mixes labels"),
    pytest.param(lambda: cluster_recovery(_S, [0, 0, 0, 0], n_neighbours=1), "both"),
    pytest.param(lambda: cluster_recovery(_S, _CLUSTERS, n_neighbours=4), "between 1 and 3"),
    pytest.param(lambda: cluster_recovery(_S, _CLUSTERS, n_neighbours=2.0), "must be an integer"),
    pytest.param(lambda: cluster_recovery(_S, _CLUSTERS, 1, auc_bins=1), "auc_bins must be at"),
    pytest.param(lambda: pair_auc(_S + 1j, _CLUSTERS), "complex"),
    pytest.param(lambda: pair_auc([[1.0, 0.0], [0.0]], [0, 1]), "ragged"),
    pytest.param(lambda: pair_auc(_S, [0, 1, 2, 3]), "both same-cluster"),
    pytest.param(lambda: pair_auc(_S, [0, 0, 1, np.nan]), "missing label"),
]


@pytest.mark.parametrize(("call", "match"), BAD_INPUT)
def test_bad_input_table(call, match):
    with pytest.raises(ValueError, match=match):
        call()


GOOD_EDGE_INPUT = [
    # (call, expected value): inputs at the edges that must give right answers
    pytest.param(
        lambda: cluster_recovery(np.ones((4, 4)), ["a", "a", "b", "b"], 2).neighbour_share,
        1 / 3,
        id="ties-base-rate",
    ),
    pytest.param(lambda: pair_auc(np.ones((4, 4)), _CLUSTERS), 0.5, id="all-tied"),
    pytest.param(lambda: pair_auc(1e300 * np.eye(4), _CLUSTERS), 0.5, id="1e300"),
    pytest.param(
        lambda: pair_auc(same_cluster_matrix(_CLUSTERS), np.array(_CLUSTERS, dtype=np.uint8)),
        1.0,
        id="uint8-labels",
    ),
    pytest.param(
        lambda: pair_auc(np.float32(same_cluster_matrix(_CLUSTERS)), _CLUSTERS), 1.0, id="float32"
    ),
    pytest.param(
        lambda: pair_auc(same_cluster_matrix([0, 0, 1]) > 0, [0, 0, 1]), 1.0, id="bool-similarity"
    ),
]


@pytest.mark.parametrize(("call", "expected"), GOOD_EDGE_INPUT)
def test_edge_input_table(call, expected):
    assert call() == pytest.approx(expected, abs=1e-15)


# ---------------------------------------------------------------------------
# The same bits on another CPU (NumPy only: sorts, searches, integer counts)
# ---------------------------------------------------------------------------

_PORTABLE = r"""
import hashlib, json
import numpy as np
from cosine_book.cluster_recovery import cluster_recovery
rng = np.random.default_rng(20261122)
S = np.round(rng.standard_normal((120, 120)), 1)
S = S + S.T
clusters = rng.integers(0, 4, 120)
results = {
    "recovery": [np.array([*vars(cluster_recovery(S, clusters, 7)).values()])],
    "binned": [np.array([cluster_recovery(S, clusters, 7, auc_bins=16).auc])],
}
print(json.dumps({
    key: [hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest() for a in arrays]
    for key, arrays in results.items()
}))
"""


def test_results_are_bit_identical_on_a_simulated_older_cpu():
    from portability import compare_here_and_there

    here, there, notes = compare_here_and_there(_PORTABLE)
    differing = sorted(name for name in here if here[name] != there[name])
    assert not differing, f"results differ on the simulated CPU ({notes}): {differing}"
