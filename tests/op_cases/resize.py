"""Registry cases for the ops of ops/resize.py."""
