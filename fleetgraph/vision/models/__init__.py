"""`paddle.vision.models`: Paddle 2.0's image classifiers, built from paddle.nn layers (no pretrained weights)."""

from . import lenet, mobilenetv1, mobilenetv2, resnet, vgg
from .lenet import LeNet
from .mobilenetv1 import MobileNetV1, mobilenet_v1
from .mobilenetv2 import MobileNetV2, mobilenet_v2
from .resnet import ResNet, resnet18, resnet34, resnet50, resnet101, resnet152
from .vgg import VGG, vgg11, vgg13, vgg16, vgg19

__all__ = [
    "LeNet", "MobileNetV1", "MobileNetV2", "ResNet", "VGG", "lenet", "mobilenet_v1", "mobilenet_v2", "mobilenetv1",
    "mobilenetv2", "resnet", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "vgg", "vgg11", "vgg13",
    "vgg16", "vgg19",
]  # fmt: skip
