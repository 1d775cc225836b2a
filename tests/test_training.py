"""Single-process training end to end: the seed scripts' models learn, in both API spellings."""

from __future__ import annotations

import numpy as np
from models import fit_a_line_2x, fit_a_line_fluid, housing_batches, mlp, train

import fleetgraph as paddle


def _fit_losses(build, epochs=30, batch_size=8, **kw):
    """Seed 001's schedule: batches of 8 for 30 epochs."""
    main, startup, x, y, loss = build(**kw)
    feeds = [{"x": xb, "y": yb} for xb, yb in housing_batches(batch_size, epochs)]
    results, _ = train(main, startup, feeds, [loss])
    return np.array([r[0][0] for r in results])


def test_fit_a_line_sgd_loss_falls_below_a_tenth():
    losses = _fit_losses(fit_a_line_2x)
    first, last = losses[:5].mean(), losses[-20:].mean()
    assert last < first / 10, (first, last)


def test_both_spellings_give_identical_losses_for_the_same_seed():
    two_x = _fit_losses(fit_a_line_2x, epochs=3)
    fluid_1x = _fit_losses(fit_a_line_fluid, epochs=3)
    np.testing.assert_array_equal(two_x, fluid_1x)


def test_same_seed_reproduces_and_other_seed_differs():
    a, b = _fit_losses(fit_a_line_2x, epochs=1, seed=5), _fit_losses(fit_a_line_2x, epochs=1, seed=5)
    c = _fit_losses(fit_a_line_2x, epochs=1, seed=6)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def _separable(n=1024, seed=0):
    """Ten Gaussian blobs in 784 dims: a synthetic set a 784-512-512-10 MLP can fit."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 1, size=(10, 784)).astype("float32")
    labels = rng.integers(0, 10, size=n)
    images = centers[labels] + rng.normal(0, 1.5, size=(n, 784)).astype("float32")
    return images.astype("float32"), labels.reshape(-1, 1).astype("int64")


def test_mlp_reaches_95_percent_training_accuracy():
    images, labels = _separable()
    main, startup, image, label, loss, acc = mlp(lambda: paddle.optimizer.Adam(learning_rate=0.001))
    feeds = [
        {"image": images[i : i + 128], "label": labels[i : i + 128]}
        for _ in range(3)
        for i in range(0, len(images), 128)
    ]
    results, scope = train(main, startup, feeds, [loss, acc])
    final_acc = np.mean([r[1][0] for r in results[-8:]])
    assert results[-1][0][0] < results[0][0][0]
    assert final_acc > 0.95, final_acc


def test_optimizers_each_lower_the_loss():
    for make in (
        lambda: paddle.optimizer.Momentum(learning_rate=0.001, momentum=0.9),
        lambda: paddle.optimizer.Momentum(learning_rate=0.001, momentum=0.9, use_nesterov=True),
        lambda: paddle.optimizer.Adam(learning_rate=0.1),
        lambda: paddle.optimizer.Adagrad(learning_rate=0.5),
    ):
        losses = _fit_losses(fit_a_line_2x, epochs=10, optimizer=make())
        assert losses[-20:].mean() < losses[:5].mean() / 2, (make().__class__.__name__, losses[:5], losses[-5:])
