"""The examples of Paddle 1.8's book chapters run as their READMEs say, on the synthetic datasets,
and reach the figures the READMEs state."""

from __future__ import annotations

import os

from dist_helpers import REPO
from test_examples import _figures, _job


def _example(tmp_path, name, *args):
    """examples/NAME/train.py with ARGS, run in TMP_PATH (where it writes its models); its output."""
    return _job(tmp_path, os.path.join(REPO, "examples", name, "train.py"), *args)


def test_recognize_digits_reaches_its_accuracy_and_the_loaded_model_predicts_the_same(tmp_path):
    out = _example(tmp_path, "recognize_digits")
    trained = _figures(r"Test with Epoch 0, avg_cost: [0-9.]+, acc: ([0-9.]+)", out)
    assert trained[0] > 0.55, out
    assert _figures(r"loaded inference model: test accuracy ([0-9.]+)", out) == trained, out
    assert (tmp_path / "recognize_digits.inference.model").is_dir()


def test_word_embedding_learns_the_next_word_and_the_loaded_model_names_it(tmp_path):
    out = _example(tmp_path, "word_embedding")
    costs = _figures(r"Average Cost ([0-9.]+)", out)
    assert len(costs) == 5 and costs[-1] < costs[0] / 2, out
    assert _figures(r"next-word accuracy ([0-9.]+)", out)[0] > 0.44, out
    assert "the most likely word is '" in out


def test_recommender_rates_the_test_set_better_than_the_mean_rating_and_the_loaded_model_rates(tmp_path):
    """The README's figure: after 200 batches the test error is about 4.5 against the mean's 6.3."""
    out = _example(tmp_path, "recommender")
    model, mean = _figures(r"test mean square error ([0-9.]+)", out)
    assert model < 0.8 * mean, out
    assert -5 <= _figures(r"Predict Rating of user id [0-9]+ on movie \".*\" is (-?[0-9.]+)", out)[0] <= 5, out


def test_dygraph_mnist_learns_and_the_loaded_model_and_optimizer_continue_it_exactly(tmp_path):
    out = _example(tmp_path, "dygraph_mnist")
    trained = _figures(r"trained model: test accuracy ([0-9.]+)", out)
    assert trained[0] > 0.7, out
    assert _figures(r"loaded model: test accuracy ([0-9.]+)", out) == trained, out
    assert _figures(r"parameters apart by at most ([0-9.e-]+)", out) == [0.0], out
    assert (tmp_path / "mnist_dygraph.pdparams").exists() and (tmp_path / "mnist_dygraph.pdopt").exists()
