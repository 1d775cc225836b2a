"""Products and distances: dot, bmm, addmm, kron, cross, trace, dist."""
