"""Registry cases for the ops of ops/pointwise.py."""
