"""Tensor creation: ranges, identity and diagonal matrices, triangles, grids and random tensors."""
