"""Registry cases for the ops of ops/creation.py."""
