"""Index-driven selection and scatter: index_select, nonzero, unique, scatter_nd, roll, flip, crop, pad."""
