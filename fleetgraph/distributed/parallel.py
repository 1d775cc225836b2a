"""Data-parallel training in dynamic mode: `paddle.DataParallel` / `fleet.distributed_model`.

Every rank runs the same model on its share of the batch; the communication is the collective ops
of the registry run eagerly over the process's existing ring (executor/comm/ring.py):
  1. at wrap time, the parameters are packed into buckets (`coalesce_tensor`), each bucket is
     `c_broadcast` from rank 0 and unpacked, so every rank starts from rank 0's values;
  2. after each `backward()`, the gradients are packed into buckets of at most `comm_buffer_size`
     MB, each bucket is `c_allreduce_sum`-ed and scaled by 1/nranks (as the static transpiler's
     `insert_allreduce` does per gradient), and unpacked into the parameters' `.grad`.
Which parameters have a gradient is all-reduced first (one flag each): a parameter with one on some
rank takes part on every rank, with zeros where it has none (Paddle's find_unused_parameters), so all
ranks exchange the same buckets; one with a gradient on no rank keeps none (the optimizers skip it,
as Paddle's do, instead of moving it by momentum or decay on a zero gradient). A sparse
(SelectedRows) gradient is made dense first.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from ..dygraph import tape
from ..dygraph.engine import run_op
from ..dygraph.mode import no_grad
from ..dygraph.parallel import RING_ID, ParallelEnv, init_ring
from ..dygraph.tensor import Tensor
from ..ir import FleetgraphError
from ..nn.layer.layers import Layer
from ..ops.collective import coalesced_offsets
from ..ops.selected_rows import SelectedRows


def _buckets(params: list, limit_bytes: int) -> list[list]:
    """Consecutive parameters of one dtype, at most `limit_bytes` a bucket (a larger one alone)."""
    out, current, size = [], [], 0
    for p in params:
        nbytes = int(np.prod(p.shape)) * np.dtype(p.dtype).itemsize
        if current and (size + nbytes > limit_bytes or current[0].dtype != p.dtype):
            out.append(current)
            current, size = [], 0
        current.append(p)
        size += nbytes
    if current:
        out.append(current)
    return out


def _fused(values: list[np.ndarray], dtype: str) -> tuple[Tensor, list[int]]:
    """coalesce_tensor over `values`: the fused buffer and each value's offset in it."""
    ins = [Tensor(v) for v in values]
    views, fused = [Tensor() for _ in values], Tensor()
    attrs = {"copy_data": True, "dtype": dtype, "use_align": False}
    run_op("coalesce_tensor", {"Input": ins}, {"Output": views, "FusedOutput": [fused]}, attrs)
    offsets, _ = coalesced_offsets([v.size for v in values], np.dtype(dtype).itemsize, False)
    return fused, offsets


def _unpacked(fused: np.ndarray, offsets: list[int], shapes: list) -> list[np.ndarray]:
    return [fused[o : o + int(np.prod(s))].reshape(s).copy() for o, s in zip(offsets, shapes)]


class DataParallel(Layer):
    """Wraps a Layer (and is one, as Paddle's): calls go to it; gradients are averaged over the
    trainers after backward()."""

    def __init__(
        self,
        layers,
        strategy=None,
        comm_buffer_size: float = 25,
        last_comm_buffer_size: float = 1,
        find_unused_parameters: bool = False,
        group=None,
    ) -> None:
        if not isinstance(layers, Layer):
            raise FleetgraphError(f"DataParallel: expected a paddle.nn.Layer, got {type(layers).__name__}")
        super().__init__()
        env = ParallelEnv()
        self._layers = layers  # a sublayer: train(), eval() and hooks reach it
        self._nranks, self._rank = env.world_size, env.rank
        self._limit = int(comm_buffer_size * 1024 * 1024)
        self._sync = True
        self._params = [p for p in layers.parameters() if isinstance(p, Tensor)]
        if len(self._params) != len(layers.parameters()):
            raise FleetgraphError("DataParallel: the layer's parameters are static; build the model in dynamic mode")
        self._seen: dict[str, weakref.ref] = {}  # each parameter's last all-reduced gradient
        if self._nranks > 1:
            init_ring(env.rank, env.world_size, env.trainer_endpoints)
            self._broadcast_parameters()  # step 1
            ref = weakref.ref(self)
            self._hook = lambda: (lambda me: me is not None and me._allreduce_grads())(ref())
            tape.register_post_backward_hook(self._hook)
            weakref.finalize(self, tape.remove_post_backward_hook, self._hook)

    # -- the wrapped layer -----------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        return self._layers(*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__") or "_sub_layers" not in self.__dict__ or "_layers" not in self._sub_layers:
                raise
            return getattr(self._sub_layers["_layers"], name)

    def parameters(self, include_sublayers: bool = True):
        return self._layers.parameters(include_sublayers)

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True):
        return self._layers.named_parameters(prefix, include_sublayers)

    def state_dict(self, *args, **kwargs):
        return self._layers.state_dict(*args, **kwargs)

    def set_state_dict(self, *args, **kwargs):
        return self._layers.set_state_dict(*args, **kwargs)

    set_dict = load_dict = set_state_dict

    def scale_loss(self, loss):
        """Paddle 2.0's spelling; gradients are averaged after backward, so the loss stays as it is."""
        return loss

    def apply_collective_grads(self) -> None:
        """Paddle 2.0's spelling; the all-reduce already ran after backward()."""

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients locally; the next one outside all-reduces the sum."""
        old, self._sync = self._sync, False
        try:
            yield
        finally:
            self._sync = old

    # -- communication ---------------------------------------------------------------------------
    def _broadcast_parameters(self) -> None:
        with no_grad():
            for bucket in _buckets(self._params, self._limit):
                fused, offsets = _fused([p.value for p in bucket], bucket[0].dtype)
                run_op("c_broadcast", {"X": [fused]}, {"Out": [fused]}, {"root": 0, "ring_id": RING_ID})
                for p, value in zip(bucket, _unpacked(fused.value, offsets, [p.shape for p in bucket])):
                    p.value = value

    def _allreduce_grads(self) -> None:
        """Step 2, after a backward() that gave this model's parameters new gradients."""
        # a weak reference, not id(): a new gradient may be allocated where the last one was freed
        fresh = [p for p in self._params if p._grad is not None and _deref(self._seen.get(p.name)) is not p._grad]
        if not self._sync or not fresh:
            return
        trainable = [p for p in self._params if not p.stop_gradient]
        with no_grad():
            flags = Tensor(np.array([p._grad is not None for p in trainable], np.float32))
            run_op("c_allreduce_sum", {"X": [flags]}, {"Out": [flags]}, {"ring_id": RING_ID})
            used = [p for p, ranks in zip(trainable, flags.value) if ranks > 0]
            for bucket in _buckets(used, self._limit):
                grads = [_dense(p) for p in bucket]
                fused, offsets = _fused(grads, bucket[0].dtype)
                run_op("c_allreduce_sum", {"X": [fused]}, {"Out": [fused]}, {"ring_id": RING_ID})
                run_op("scale", {"X": [fused]}, {"Out": [fused]}, {"scale": 1.0 / self._nranks})
                for p, value in zip(bucket, _unpacked(fused.value, offsets, [p.shape for p in bucket])):
                    p._grad = value
                    self._seen[p.name] = weakref.ref(value)


def _deref(ref):
    return None if ref is None else ref()


def _dense(p: Tensor) -> np.ndarray:
    g = p._grad
    if g is None:
        return np.zeros(p.shape, p.dtype)
    return g.to_dense(np) if isinstance(g, SelectedRows) else g
