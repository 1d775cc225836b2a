"""Registry cases for the ops of ops/projection.py."""
