"""Collective communication ops (c_allreduce_sum, c_broadcast, stream syncs, communicator init) and
coalesce_tensor."""

from __future__ import annotations
