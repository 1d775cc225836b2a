"""Registry cases for the ops of ops/indexing.py."""
