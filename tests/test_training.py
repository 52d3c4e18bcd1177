"""Tests for cosine_book.gpt and cosine_book.training: chapter 1's transformer and its record."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from cosine_book.gpt import GPT, CharCorpus, GPTConfig, parameter_table
from cosine_book.training import (
    OPTIMIZERS,
    make_optimizer,
    shakespeare_corpus,
    train,
    truncate_tensor,
)

TINY = GPTConfig(width=16, heads=2, blocks=1, context=8)


def test_chapter_model_has_thirty_tensors_over_three_orders_of_magnitude():
    table = parameter_table(GPT(GPTConfig()))
    assert len(table) == 30
    assert max(table.values()) / min(table.values()) >= 1000
    assert sum(table.values()) == sum(p.numel() for p in GPT(GPTConfig()).parameters())


def test_model_is_causal_and_starts_near_the_uniform_loss():
    model = GPT(GPTConfig(), seed=3)
    corpus = shakespeare_corpus()
    x, y = corpus.batch(8, 64, torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert abs(float(model.loss(x, y)) - math.log(65)) < 0.1
        changed = x.clone()
        changed[:, 40:] = (changed[:, 40:] + 1) % 65
        np.testing.assert_array_equal(model(x)[:, :40].numpy(), model(changed)[:, :40].numpy())
        assert not torch.equal(model(x)[:, 40:], model(changed)[:, 40:])


def test_corpus_batches_are_shifted_windows_from_the_right_part():
    corpus = CharCorpus("the quick brown fox jumps over the lazy dog " * 10, held_out=0.2)
    x, y = corpus.batch(5, 6, torch.Generator().manual_seed(1))
    assert x.shape == y.shape == (5, 6)
    text = corpus.decode(corpus.train)
    for row_x, row_y in zip(x, y, strict=True):
        window = corpus.decode(row_x)
        assert window in text and corpus.decode(row_y)[:-1] == window[1:]
    again = corpus.batch(5, 6, torch.Generator().manual_seed(1))
    assert torch.equal(again[0], x)
    held_x, _ = corpus.batch(3, 6, torch.Generator().manual_seed(1), held=True)
    assert all(corpus.decode(row) in corpus.decode(corpus.held) for row in held_x)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: CharCorpus("abc"), "text"),
        (lambda: CharCorpus("abcdef", held_out=1.0), "held_out"),
        (lambda: GPTConfig(width=10, heads=4), "heads"),
        (lambda: GPTConfig(blocks=0), "blocks"),
        (lambda: make_optimizer("Adam", GPT(TINY), 0.1), "optimizer"),
        (lambda: make_optimizer("SGD", GPT(TINY), -0.1), "learning_rate"),
        (lambda: train("Lion", 0.1, config=TINY), "optimizer"),
        (lambda: train("SGD", 0.1, threshold=1.5, config=TINY), "threshold"),
        (lambda: train("SGD", 0.1, steps=0, config=TINY), "steps"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_truncation_is_the_projection_onto_the_cone():
    # Moreau's conditions: p in the cone, u - p orthogonal to p, and <u - p, v> <= 0
    # for every v in the cone (sampled), in float32 and float64.
    rng = np.random.default_rng(0)
    for dtype in (torch.float32, torch.float64):
        for _ in range(40):
            u, g = rng.normal(size=(2, 9))
            threshold = float(rng.uniform(0.0, 1.0))
            p = truncate_tensor(torch.tensor(u, dtype=dtype), torch.tensor(g, dtype=dtype),
                                threshold)  # fmt: skip
            assert p.dtype == dtype and p.shape == (9,)
            p = p.double().numpy()
            tol = 1e-5 if dtype == torch.float32 else 1e-10
            if np.any(p):
                assert p @ g / np.linalg.norm(p) / np.linalg.norm(g) >= threshold - tol
            assert abs((u - p) @ p) <= tol * (u @ u)
            g_hat = g / np.linalg.norm(g)
            for _ in range(20):
                w = rng.normal(size=9)
                w -= (w @ g_hat) * g_hat
                v = threshold * g_hat + np.sqrt(1 - threshold**2) * w / np.linalg.norm(w)
                assert (u - p) @ v <= tol * np.linalg.norm(u)
    assert torch.equal(truncate_tensor(torch.ones(3), torch.zeros(3), 0.5), torch.ones(3))


def test_muon_takes_the_hidden_matrices_and_adamw_the_rest():
    model = GPT(GPTConfig())
    optimizer = make_optimizer("Muon", model, 0.01)
    muon, adamw = optimizer.parts
    hidden = {id(p) for group in muon.param_groups for p in group["params"]}
    for name, parameter in model.named_parameters():
        expected = parameter.ndim == 2 and name.startswith("blocks.")
        assert (id(parameter) in hidden) == expected, name
    assert len(hidden) == 8 and isinstance(adamw, torch.optim.AdamW)


def test_sgd_updates_point_along_the_batch_gradient():
    run = train("SGD", 0.3, steps=4, batch_size=4, probe_every=2, probe_windows=8, config=TINY)
    np.testing.assert_allclose(run.local, 1.0, atol=1e-5)
    np.testing.assert_allclose(run.profile_cosine, 1.0, atol=1e-5)
    assert run.probe_steps.tolist() == [0, 2] and run.probe_local.shape == (2, 18)


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_every_record_obeys_the_block_identity_and_bounds(optimizer):
    run = train(optimizer, 0.01, steps=6, batch_size=4, probe_every=3, probe_windows=8,
                threshold=0.6, config=TINY)  # fmt: skip
    local = np.nan_to_num(run.local)
    np.testing.assert_allclose(np.sum(run.weights * local, axis=1), run.global_cosine, atol=1e-9)
    defined = ~np.isnan(run.local)
    assert (run.local[defined] >= 0.6 - 1e-6).all()
    assert (run.global_cosine >= run.profile_cosine * np.nanmin(run.local, axis=1) - 1e-9).all()
    assert np.isfinite(run.final_held_loss) and run.held_loss.shape == (2,)


def test_the_same_seed_gives_the_same_run():
    first = train("AdamW", 0.01, steps=5, batch_size=4, probe_windows=8, config=TINY)
    second = train("AdamW", 0.01, steps=5, batch_size=4, probe_windows=8, config=TINY)
    np.testing.assert_array_equal(first.loss, second.loss)
    np.testing.assert_array_equal(first.local, second.local)
    other = train("AdamW", 0.01, steps=5, batch_size=4, probe_windows=8, seed=1, config=TINY)
    assert not np.array_equal(first.loss, other.loss)
