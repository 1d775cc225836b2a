"""Eager mode: the eager Tensor, the tape and the one dispatch (`bind`) every builder ends in."""
