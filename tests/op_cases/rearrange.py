"""Registry cases for the ops of ops/rearrange.py."""
