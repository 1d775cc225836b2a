"""Pointwise activations with parameters and unary math beyond the basic ones."""
