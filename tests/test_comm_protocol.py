"""The rings implement the collective protocol, and the shared-memory path depends on no ring internals."""

from __future__ import annotations

import ast
import inspect

import zmq

from fleetgraph.executor.comm import collective, ring, shm
from fleetgraph.executor.comm.collective import Collective, Transport


def test_a_ring_is_a_collective_whatever_its_size():
    context = zmq.Context()
    try:
        local = ring.Ring(context, 1, 0, ["127.0.0.1:1"])
        assert isinstance(local, Collective)
        assert local.transport == "local"
    finally:
        context.term()


def test_shared_memory_has_every_method_of_a_transport():
    for method in ("allreduce", "broadcast", "barrier", "close"):
        want = list(inspect.signature(getattr(Transport, method)).parameters)
        got = list(inspect.signature(getattr(shm.SharedMemory, method)).parameters)
        assert got == want, method


def test_shared_memory_and_the_protocol_import_nothing_from_the_ring():
    for module in (shm, collective):
        tree = ast.parse(inspect.getsource(module))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "ring" not in imported and "ring_io" not in imported, module.__name__
