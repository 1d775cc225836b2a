"""LeNet as Paddle 2.0's paddle.vision.models.lenet: the same layers, so Paddle's state dicts map."""

from __future__ import annotations

from ... import nn
from ...nn.functional import flatten

__all__ = ["LeNet"]


class LeNet(nn.Layer):
    """LeCun et al. 1998 on 1x28x28 inputs; num_classes <= 0 leaves out the fully connected head."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1),
            nn.ReLU(),
            nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0),
            nn.ReLU(),
            nn.MaxPool2D(2, 2),
        )
        if num_classes > 0:
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, num_classes))

    def forward(self, inputs):
        x = self.features(inputs)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x
