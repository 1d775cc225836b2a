"""Resizing and resampling images: interpolate and its spellings, affine_grid, grid_sampler."""
