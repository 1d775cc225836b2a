"""Registry cases for the ops of ops/conv_nd.py."""
