"""Paddle 2.0 names that the family tests reach only under another spelling: each checked here for
what Paddle 2.0 documents it does."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph import nn


def test_add_n_sums_its_tensors_and_is_tensor_tells_tensors():
    paddle.disable_static()
    a, b = paddle.to_tensor(np.ones((2, 2), np.float32)), paddle.to_tensor(np.full((2, 2), 2.0, np.float32))
    np.testing.assert_allclose(paddle.add_n([a, b, a]).numpy(), np.full((2, 2), 4.0))
    assert paddle.is_tensor(a) and not paddle.is_tensor(np.ones(2))


def test_dropout3d_zeroes_whole_channels_and_scales_the_rest():
    paddle.disable_static()
    paddle.seed(3)
    x = paddle.to_tensor(np.ones((2, 8, 2, 3, 3), np.float32))
    for dropout3d in (nn.functional.dropout3d, nn.dropout3d):
        out = dropout3d(x, p=0.5).numpy()
        per_channel = out.reshape(2, 8, -1)
        assert set(np.unique(per_channel)) <= {0.0, 2.0}
        assert all(len(np.unique(c)) == 1 for c in per_channel.reshape(16, -1))  # a channel is all kept or all 0
        np.testing.assert_array_equal(dropout3d(x, p=0.5, training=False).numpy(), x.numpy())


def test_module_spellings_of_paddle_nn():
    assert nn.extension is nn.functional.extension and nn.extension.diag_embed is nn.functional.diag_embed
    assert nn.weight_norm_hook.weight_norm is nn.utils.weight_norm
    assert issubclass(nn.LSTMCell, nn.RNNCellBase) and issubclass(nn.GRUCell, nn.RNNCellBase)


def test_xavier_normal_draws_with_glorots_deviation():
    paddle.disable_static()
    paddle.seed(5)
    linear = nn.Linear(300, 200, weight_attr=paddle.ParamAttr(initializer=nn.initializer.XavierNormal()))
    assert linear.weight.numpy().std() == pytest.approx(np.sqrt(2.0 / 500), rel=0.03)


def test_jit_load_gives_a_translated_layer_that_runs(tmp_path):
    paddle.disable_static()
    net = nn.Linear(3, 2)
    paddle.jit.save(net, str(tmp_path / "net"), input_spec=[paddle.jit.InputSpec([None, 3], "float32", "x")])
    loaded = paddle.jit.load(str(tmp_path / "net"))
    assert isinstance(loaded, paddle.jit.TranslatedLayer)
    x = np.ones((2, 3), np.float32)
    out = loaded(paddle.to_tensor(x))
    np.testing.assert_allclose(
        np.asarray(out[0] if isinstance(out, list) else out.numpy()), net(paddle.to_tensor(x)).numpy(), rtol=1e-6
    )


def test_static_sparse_embedding_is_a_sparse_lookup_of_its_table():
    paddle.enable_static()
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        ids = paddle.static.data("ids", [None, 1], "int64")
        paddle.static.nn.sparse_embedding(ids, [100, 8])
    (lookup,) = [op for op in main.global_block().ops if op.type.startswith("lookup_table")]
    assert lookup.attrs["is_sparse"] and lookup.attrs["is_distributed"]


def test_a_base_transform_subclass_applies_itself_to_the_keys_it_is_given():
    vt = paddle.vision.transforms

    class AddOne(vt.BaseTransform):
        def _apply_image(self, image):
            return image + 1

    assert issubclass(vt.Normalize, vt.BaseTransform) and paddle.vision.BaseTransform is vt.BaseTransform
    np.testing.assert_array_equal(AddOne()(np.zeros((2, 2, 3))), np.ones((2, 2, 3)))
