"""Transposed and 3-D convolutions and 3-D/adaptive pooling."""
