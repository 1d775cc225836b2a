"""Why `pretrained=True` fails: Paddle 2.0 downloads ImageNet weights, and fleetgraph downloads nothing."""

from __future__ import annotations


def refuse_pretrained(arch: str, pretrained: bool) -> None:
    """Raise where Paddle would fetch weights, so no one trains from random weights thinking they are ImageNet's."""
    if pretrained:
        raise NotImplementedError(
            f"{arch}(pretrained=True): fleetgraph downloads no weights; build it with pretrained=False and "
            "load a Paddle state dict with model.set_state_dict(paddle.load(path))"
        )
