"""Registry cases for the ops of ops/normalization.py."""
