"""`paddle.text`: the text datasets as paddle.io Datasets (Paddle 2.0's python/paddle/text)."""

__all__: list[str] = []
