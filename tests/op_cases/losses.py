"""Registry cases for the ops of ops/losses.py."""
