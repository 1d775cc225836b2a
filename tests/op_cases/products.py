"""Registry cases for the ops of ops/products.py."""
