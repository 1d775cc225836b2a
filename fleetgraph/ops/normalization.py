"""Normalization layers beyond batch_norm: layer, group, instance, spectral, data norms, lrn, l2."""
