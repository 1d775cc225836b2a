"""Rearranging pixels and channels: space_to_depth, pixel_shuffle, shuffle_channel, temporal_shift, unfold."""
