"""`paddle.vision.datasets`: Paddle 2.0's image datasets as paddle.io Datasets, over fleetgraph.dataset's parsers."""

from . import cifar, flowers, folder, mnist, voc2012
from .cifar import Cifar10, Cifar100
from .flowers import Flowers
from .folder import DatasetFolder, ImageFolder
from .mnist import MNIST, FashionMNIST
from .voc2012 import VOC2012

__all__ = [
    "Cifar10", "Cifar100", "DatasetFolder", "FashionMNIST", "Flowers", "ImageFolder", "MNIST", "VOC2012",
    "cifar", "flowers", "folder", "mnist", "voc2012",
]  # fmt: skip
