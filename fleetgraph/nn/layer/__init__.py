"""The `paddle.nn` layer classes."""
