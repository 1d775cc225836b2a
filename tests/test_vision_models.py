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

# Entries and sums over paddle.vision.models' state_dict()s (Paddle's own figures for the same architectures).
PADDLE_COUNTS = [
    (LeNet, {}, 10, 61610),
    (resnet18, {}, 102, 11699112),
    (resnet34, {}, 182, 21814696),
    (resnet50, {}, 267, 25610152),
    (resnet101, {}, 522, 44654504),
    (resnet152, {}, 777, 60344232),
    (vgg11, {}, 22, 132863336),
    (vgg11, {"batch_norm": True}, 54, 132874344),
    (vgg13, {}, 26, 133047848),
    (vgg13, {"batch_norm": True}, 66, 133059624),
    (vgg16, {}, 32, 138357544),
    (vgg16, {"batch_norm": True}, 84, 138374440),
    (vgg19, {}, 38, 143667240),
    (vgg19, {"batch_norm": True}, 102, 143689256),
    (mobilenet_v1, {}, 137, 4253864),
    (mobilenet_v1, {"scale": 0.5}, 137, 1342536),
    (mobilenet_v2, {}, 262, 3538984),
    (mobilenet_v2, {"scale": 0.5}, 262, 1987224),
]


def test_every_builder_holds_as_many_parameters_as_paddles():
    """Built in static mode, where parameters are declared and not yet drawn, so even VGG is instant."""
    paddle.enable_static()
    with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
        counts = [(build, kwargs, *_count(build(**kwargs))) for build, kwargs, _, _ in PADDLE_COUNTS]
        deepest = resnet152(num_classes=0)
    assert isinstance(deepest.layer3[0], BottleneckBlock) and len(deepest.layer3) == 36
    assert counts == PADDLE_COUNTS


def _count(model) -> tuple[int, int]:
    """Entries of the state dict, and its parameters and BatchNorm statistics together."""
    state = model.state_dict()
    return len(state), sum(math.prod(v.shape) for v in state.values())


def test_a_dynamic_model_holds_the_same_parameters():
    assert _count(LeNet()) == (10, 61610)
    assert _count(mobilenet_v2(scale=0.5)) == (262, 1987224)


def test_state_dict_names_follow_paddles_sublayers():
    assert [models.lenet.LeNet, models.resnet.ResNet, models.vgg.VGG] == [LeNet, ResNet, VGG]
    assert [models.mobilenetv1.MobileNetV1, models.mobilenetv2.MobileNetV2] == [MobileNetV1, MobileNetV2]
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
    small = resnet18(num_classes=7)
    assert isinstance(small.layer1[0], BasicBlock) and small(x).shape == [2, 7]
    assert ResNet(BasicBlock, 18, num_classes=0, with_pool=False)(x).shape == [2, 512, 1, 1]
    assert MobileNetV1(scale=0.25, num_classes=5)(x).shape == [2, 5]
    assert MobileNetV2(scale=0.25, num_classes=0)(x).shape == [2, 1280, 1, 1]
    vgg = vgg11(num_classes=0, with_pool=False)
    assert isinstance(vgg, VGG) and vgg(x).shape == [2, 512, 1, 1]


def _sine_weights(model):
    """Weights anyone can rebuild: entry i of the state dict is 0.2 sin(0.37 k + i) over its elements
    (variances made positive); then eval mode, so BatchNorm uses them."""
    state = {}
    for i, (name, value) in enumerate(model.state_dict().items()):
        w = (np.sin(np.arange(math.prod(value.shape)) * 0.37 + i) * 0.2).reshape(value.shape).astype("float32")
        state[name] = paddle.to_tensor(np.abs(w) + 0.5 if name.endswith("_variance") else w)
    model.set_state_dict(state)
    model.eval()
    return model


# Paddle's outputs (paddle.vision.models with the same weights and inputs), first four values per row
@pytest.mark.parametrize(
    "build, channels, expected",
    [
        (LeNet, 1, [[-0.18443, -0.26008, -0.30054, -0.30032], [-0.10407, -0.17804, -0.22792, -0.24694]]),
        (
            lambda: resnet18(num_classes=4),
            3,
            [[-0.1797, -0.01254, 0.15632, 0.30403], [-0.18221, -0.01411, 0.15589, 0.3048]],
        ),
        (lambda: mobilenet_v1(scale=0.25, num_classes=4), 3, [[-0.22224, -0.33533, -0.40304, -0.41619]] * 2),
        (lambda: mobilenet_v2(scale=0.25, num_classes=4), 3, [[-0.65579, -0.69504, -0.6402, -0.49874]] * 2),
    ],
)
def test_outputs_equal_paddles_for_the_same_weights(build, channels, expected):
    size = 28 if channels == 1 else 32
    step = 1.0 if channels == 1 else 0.1
    scale = 0.5 if channels == 1 else 1.0
    x = (np.cos(np.arange(2 * channels * size * size) * step) * scale).reshape(2, channels, size, size)
    out = _sine_weights(build())(paddle.to_tensor(x.astype("float32"))).numpy()
    np.testing.assert_allclose(out.reshape(2, -1)[:, :4], expected, atol=3e-5)


@pytest.mark.parametrize("build", [resnet18, vgg11, mobilenet_v1, mobilenet_v2])
def test_pretrained_weights_are_refused_with_a_reason(build):
    with pytest.raises(NotImplementedError, match=r"\(pretrained=True\): fleetgraph downloads no weights"):
        build(pretrained=True)


def test_lenet_takes_a_training_step_in_static_mode():
    paddle.seed(0)
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        image = paddle.static.data("image", [None, 1, 28, 28], "float32")
        label = paddle.static.data("label", [None, 1], "int64")
        loss = paddle.nn.functional.cross_entropy(LeNet()(image), label)
        paddle.optimizer.SGD(learning_rate=0.01).minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    rng = np.random.RandomState(0)
    feed = {"image": rng.rand(8, 1, 28, 28).astype("float32"), "label": rng.randint(0, 10, (8, 1)).astype("int64")}
    losses = [float(np.asarray(exe.run(main, feed=feed, fetch_list=[loss])[0]).mean()) for _ in range(3)]
    assert all(np.isfinite(losses)) and losses[2] < losses[0]
