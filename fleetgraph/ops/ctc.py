"""CTC loss and decoding and edit distance."""
