"""paddle.vision.models: Paddle 2.0's classifiers with its parameter names, shapes and counts."""

import math

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph.vision import models
from fleetgraph.vision.models import (
    VGG,
    LeNet,
    MobileNetV1,
    MobileNetV2,
    ResNet,
    mobilenet_v1,
    mobilenet_v2,
    resnet18,
    resnet34,
    resnet50,
    resnet101,
    resnet152,
    vgg11,
    vgg13,
    vgg16,
    vgg19,
)
from fleetgraph.vision.models.resnet import BasicBlock, BottleneckBlock


def _count(model) -> int:
    """Parameters and BatchNorm statistics together, as the sum over Paddle's state_dict."""
    return sum(math.prod(v.shape) for v in model.state_dict().values())


def _vgg_classifier_count(num_classes: int = 1000) -> int:
    return 512 * 7 * 7 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * num_classes + num_classes


# Sums over paddle.vision.models' state_dict()s (Paddle's own figures for the same architectures).
@pytest.mark.parametrize(
    "build, count, entries",
    [
        (LeNet, 61610, 10),
        (resnet18, 11699112, 102),
        (resnet50, 25610152, 267),
        (mobilenet_v1, 4253864, 137),
        (lambda: mobilenet_v1(scale=0.5), 1342536, 137),
        (mobilenet_v2, 3538984, 262),
        (lambda: mobilenet_v2(scale=0.5), 1987224, 262),
    ],
)
def test_models_hold_as_many_parameters_as_paddles(build, count, entries):
    model = build()
    assert _count(model) == count
    assert len(model.state_dict()) == entries


def test_vgg11_bn_holds_paddles_parameter_count():
    features = vgg11(batch_norm=True, num_classes=0)  # the 100M-parameter classifier counted by formula
    assert _count(features) + _vgg_classifier_count() == 132874344
    assert len(features.state_dict()) == 54 - 6


def test_state_dict_names_follow_paddles_sublayers():
    assert list(LeNet().state_dict())[:4] == [
        "features.0.weight",
        "features.0.bias",
        "features.3.weight",
        "features.3.bias",
    ]
    names = resnet18().state_dict()
    assert names["layer2.0.downsample.0.weight"].shape == [128, 64, 1, 1]
    assert names["bn1._mean"].shape == [64] and names["fc.weight"].shape == [512, 1000]
    v1 = mobilenet_v1(scale=0.25).state_dict()
    assert v1["conv5_3._depthwise_conv._conv.weight"].shape == [128, 1, 3, 3]
    assert v1["conv1._norm_layer._variance"].shape == [8]
    v2 = mobilenet_v2(scale=0.25).state_dict()
    assert v2["features.1.conv.0.0.weight"].shape == [8, 1, 3, 3]
    assert v2["classifier.1.weight"].shape == [1280, 1000]


def test_output_shapes_for_a_small_batch_in_dynamic_mode():
    x28 = paddle.to_tensor(np.random.rand(2, 1, 28, 28).astype("float32"))
    assert LeNet()(x28).shape == [2, 10]
    assert LeNet(num_classes=0)(x28).shape == [2, 16, 5, 5]
    x = paddle.to_tensor(np.random.rand(2, 3, 32, 32).astype("float32"))
    assert resnet18(num_classes=7)(x).shape == [2, 7]
    assert ResNet(BottleneckBlock, 50, num_classes=0, with_pool=False)(x).shape == [2, 2048, 1, 1]
    assert MobileNetV1(scale=0.25, num_classes=5)(x).shape == [2, 5]
    assert MobileNetV2(scale=0.25, num_classes=0)(x).shape == [2, 1280, 1, 1]
    assert vgg11(num_classes=0, with_pool=False)(x).shape == [2, 512, 1, 1]


def test_every_builder_is_a_paddle_architecture():
    assert isinstance(resnet34(num_classes=0).layer1[0], BasicBlock)
    blocks = {depth: len(build(num_classes=0).layer3) for depth, build in ((101, resnet101), (152, resnet152))}
    assert blocks == {101: 23, 152: 36}
    convs = {b: sum(1 for k in b(num_classes=0).state_dict() if k.endswith("weight")) for b in (vgg13, vgg16, vgg19)}
    assert convs == {vgg13: 10, vgg16: 13, vgg19: 16}
    assert isinstance(vgg16(num_classes=0, with_pool=False), VGG)
    assert [models.lenet, models.resnet, models.vgg, models.mobilenetv1, models.mobilenetv2]


@pytest.mark.parametrize("build", [resnet18, vgg11, mobilenet_v1, mobilenet_v2])
def test_pretrained_weights_are_refused_with_a_reason(build):
    with pytest.raises(NotImplementedError, match=r"\(pretrained=True\): fleetgraph downloads no weights"):
        build(pretrained=True)


def test_lenet_takes_a_training_step_in_static_mode():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        image = paddle.static.data("image", [None, 1, 28, 28], "float32")
        label = paddle.static.data("label", [None, 1], "int64")
        loss = paddle.nn.functional.cross_entropy(LeNet()(image), label)
        paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    rng = np.random.RandomState(0)
    feed = {"image": rng.rand(8, 1, 28, 28).astype("float32"), "label": rng.randint(0, 10, (8, 1)).astype("int64")}
    losses = [float(np.asarray(exe.run(main, feed=feed, fetch_list=[loss])[0]).mean()) for _ in range(3)]
    assert all(np.isfinite(losses)) and losses[2] < losses[0]
