"""Chapters 2 and 3: the numbers their sentences quote, recomputed.

The first test guards every decimal number of the prose (two or more decimals): it
must appear, as a whole number (not as part of a longer one), in the text printed by a
code cell above it, or be an input listed here with a test below that recomputes it.
The others re-compute what the sentences claim.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from notebook_outputs import outputs_text

from cosine_book.portable import cos
from cosine_book.similarity import (
    block_cosines,
    blocks_with,
    edge_search,
    local_cosine_range,
    profiles_with_cosine,
)

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = {
    "ch2": ROOT / "chapters" / "02_block_decomposition.ipynb",
    "ch3": ROOT / "chapters" / "03_bounds.ipynb",
}
# Numbers in the prose that are inputs or worked by hand; each is recomputed below.
INPUTS = {
    "ch2": {"0.0627", "2.52"},
    "ch3": {"0.05", "0.625", "0.27", "0.73", "0.09", "0.18", "0.72", "0.01", "0.99"},
}
# A decimal number as a whole: not preceded or followed by a digit, a point or a letter.
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?!\w|\.\d)")


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_decimal_in_the_prose_is_printed_above_it(chapter):
    printed: set[str] = set()
    used: set[str] = set()
    for index, cell in enumerate(json.loads(CHAPTERS[chapter].read_text())["cells"]):
        if cell["cell_type"] == "code":
            printed |= set(NUMBER.findall(outputs_text(cell)))
            continue
        text = re.sub(r"\$\$.*?\$\$", "", "".join(cell["source"]), flags=re.S)
        for match in re.finditer(r"(?<![\w.])-?\d+\.\d{2,}(?!\w)", text):
            number = match.group().lstrip("-")
            assert number in INPUTS[chapter] or number in printed, (chapter, index, number)
            used.add(number)
    # Every input listed is still quoted (the list does not grow stale).
    assert INPUTS[chapter] <= used, INPUTS[chapter] - used


# ------------------------------------------------------------------------- chapter 2


def test_ch2_limit_construction_with_different_local_cosines():
    # eq-ch2-limit: cos = eps (c1 + c2) / (1 + eps^2) and rho = 2 eps / (1 + eps^2).
    c1, c2 = 0.9, 0.7
    for eps in [1.0, 0.1, 0.01, 0.001]:
        s = block_cosines(*blocks_with([c1, c2], [eps, 1.0], [1.0, eps]))
        assert s.global_cosine == pytest.approx(eps * (c1 + c2) / (1 + eps**2), rel=1e-12)
        assert s.profile_cosine == pytest.approx(2 * eps / (1 + eps**2), rel=1e-12)


def test_ch2_widget_start_weights():
    # "both blocks carry the same weight (printed below)": 0.2 / 1.04 each.
    s = block_cosines(*blocks_with([0.9, 0.0], [0.2, 1.0], [1.0, 0.2]))
    np.testing.assert_allclose(s.weights, [0.2 / 1.04] * 2, rtol=1e-12)
    assert f"{0.2 / 1.04:.4f}" == "0.1923"


def test_ch2_exercise_target_epsilon():
    # ex-ch2-target: eps = (s - sqrt(s^2 - 4 g^2)) / (2 g) = (1.6 - sqrt(2.52)) / 0.2 ≈ 0.0627.
    s, g = 1.6, 0.1
    assert s**2 - 4 * g**2 == pytest.approx(2.52)
    eps = (s - np.sqrt(s**2 - 4 * g**2)) / (2 * g)
    assert f"{eps:.4f}" == "0.0627"
    value = block_cosines(*blocks_with([0.9, 0.7], [eps, 1.0], [1.0, eps])).global_cosine
    assert value == pytest.approx(g, abs=1e-12)


# ------------------------------------------------------------------------- chapter 3


def test_ch3_sweep_falls_short_of_the_edges_at_rho_02():
    # "at rho = 0.2 the sweep reaches -0.0756 against the edge -0.0800 and 0.1771 against 0.1800"
    local = [0.9, -0.4, 0.3, 0.5]
    shares = (1 - cos(np.linspace(0.0, np.pi, 41)[1:-1])) / 2
    runs = [
        block_cosines(*blocks_with(local, *profiles_with_cosine(0.2, t, 4, 0.05))) for t in shares
    ]
    values = np.array([s.global_cosine for s in runs])
    assert f"{values.min():.4f}" == "-0.0756" and f"{values.max():.4f}" == "0.1771"
    assert values.min() > 0.2 * min(local) and values.max() < 0.2 * max(local)
    # "mostly because of the extra blocks": the ends of the sweep (share 1 and 0) give the
    # proof's limits (cos phi' c + eps^2 S) / (1 + m eps^2); "the rest because the sweep
    # stops just short of share 0 and 1": with eps = 0 the same shares still miss.
    assert f"{shares[0]:.5f}" == "0.00154" and f"{shares[-1]:.5f}" == "0.99846"
    eps2, m = 0.05**2, 2
    cos_phi = 0.2 * (1 + m * eps2) - m * eps2
    upper = (cos_phi * 0.9 + eps2 * (0.3 + 0.5)) / (1 + m * eps2)
    lower = (cos_phi * -0.4 + eps2 * (0.3 + 0.5)) / (1 + m * eps2)
    ends = [
        block_cosines(*blocks_with(local, *profiles_with_cosine(0.2, t, 4, 0.05))).global_cosine
        for t in (1.0, 0.0)
    ]
    assert ends == pytest.approx([lower, upper], abs=1e-12)
    assert f"{upper:.5f}" == "0.17751" and f"{lower:.5f}" == "-0.07602"
    no_extra = [
        block_cosines(*blocks_with(local, *profiles_with_cosine(0.2, t, 4, 0.0))).global_cosine
        for t in shares
    ]
    assert f"{min(no_extra):.5f}" == "-0.07960" and f"{max(no_extra):.5f}" == "0.17960"
    assert values.min() - lower > 0 and min(no_extra) - 0.2 * min(local) > 0


def test_ch3_edge_search_counts():
    # "No search crosses an edge"; every excess below 1e-15 (rounding).
    excess = edge_search(np.random.default_rng(11), n_searches=12)
    assert (excess < 1e-15).all()
    assert (np.abs(excess) < 1e-9).sum() == 24


def test_ch3_local_range_corners():
    # The corners rho in {0.01, 1}, share in {0.01, 0.99}: near the ends of the range.
    for local in ([0.9, 0.7], [0.8, -0.3], [-0.9, -0.3]):
        lower, upper = local_cosine_range(local)
        values = [
            block_cosines(*blocks_with(local, *profiles_with_cosine(rho, t))).global_cosine
            for rho in [0.01, 1.0]
            for t in [0.01, 0.99]
        ]
        assert lower <= min(values) < lower + 0.02
        assert upper - 0.02 < max(values) <= upper


def test_ch3_threshold_target():
    # "For one of chapter 1's thresholds, 0.8, and a target of 0.5, that is rho >= 0.625";
    # necessary: just below it, equal local cosines miss the target.
    assert 0.5 / 0.8 == 0.625
    s = block_cosines(*blocks_with([0.8, 0.8], *profiles_with_cosine(0.625, 0.5)))
    assert s.global_cosine == pytest.approx(0.5, abs=1e-12)
    below = block_cosines(*blocks_with([0.8, 0.8], *profiles_with_cosine(0.6, 0.5)))
    assert below.global_cosine < 0.5


def test_ch3_refinement_check_counts_only_pairs_that_could_fail():
    # Cell "Refinement and the mediant": identical and one-block pairs are left out, and
    # no refinement among the rest raised rho.
    from cosine_book.portable import standard_normal
    from cosine_book.similarity import cosine

    def random_split(rng, stops):
        inner = np.array(stops[1:-1])
        keep = inner[rng.integers(0, 2, inner.size) == 1]
        return [stops[0], *keep.tolist(), stops[-1]]

    def rho(x, y, stops):
        pieces = list(zip(stops[:-1], stops[1:], strict=True))
        return block_cosines(
            [x[a:b] for a, b in pieces], [y[a:b] for a, b in pieces]
        ).profile_cosine

    rng = np.random.default_rng(5)
    compared = left_out = 0
    for _ in range(2000):
        x, y = (standard_normal(rng, 12) for _ in range(2))
        fine = random_split(rng, list(range(13)))
        coarse = random_split(rng, fine)
        assert abs(cosine(x, y)) <= cosine(np.abs(x), np.abs(y)) + 1e-12
        if coarse == fine or len(coarse) == 2:
            left_out += 1
            continue
        compared += 1
        assert rho(x, y, fine) <= rho(x, y, coarse) + 1e-12
    assert compared + left_out == 2000 and 0 < left_out < compared


def test_ch3_simpson_exercise_numbers():
    # ex-ch3-simpson: 0.09 + 0.18 = 0.27 and 0.72 + 0.01 = 0.73.
    first = block_cosines(*blocks_with([0.9, 0.2], [0.1**0.5, 0.9**0.5], [0.1**0.5, 0.9**0.5]))
    second = block_cosines(*blocks_with([0.8, 0.1], [0.9**0.5, 0.1**0.5], [0.9**0.5, 0.1**0.5]))
    np.testing.assert_allclose(first.weights * first.local, [0.09, 0.18], atol=1e-12)
    np.testing.assert_allclose(second.weights * second.local, [0.72, 0.01], atol=1e-12)
