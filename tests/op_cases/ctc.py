"""Registry cases for the ops of ops/ctc.py."""
