"""`fleetgraph.checkpoint`, kept for the documented `fleetgraph.checkpoint.meta(dirname)`: the format
lives in `fleetgraph.store.checkpoint`."""

from .store.checkpoint import MANIFEST, CheckpointError, check_value, load, meta, read_manifest, save

__all__ = ["MANIFEST", "CheckpointError", "check_value", "load", "meta", "read_manifest", "save"]
