"""`paddle.distributed.split`: Paddle 2.0's model parallelism, a linear or embedding layer whose weight
is split over the ranks of a collective job, in a static program.

As in Paddle 2.0 each rank builds an ordinary `nn.Linear` or `nn.Embedding` over its part of the weight
and joins the parts with the collectives of group 0:
  - embedding (axis 0): rank r holds rows [r*p, r*p + p) of the N x M weight, p = ceil(N / nranks) (the
    last rank the rest), plus one more row, its padding index; `shard_index` maps the ids outside its
    rows to that row, which looks up zeros, and `c_allreduce_sum` adds the ranks' lookups;
  - row-parallel linear (axis 0): rank r holds rows [r*N/n, (r+1)*N/n) and takes that slice of the
    input's last axis; gather_out all-reduces the partial products (each rank's bias is added once
    per rank, as Paddle 2.0 does);
  - column-parallel linear (axis 1): rank r holds columns [r*M/n, (r+1)*M/n) and its slice of the
    bias; gather_out all-gathers the outputs and concatenates them along the last axis.
The weights are `is_distributed`: Fleet's collective transpiler neither broadcasts them from rank 0
nor all-reduces their gradients. The column-parallel bias is too (a deliberate difference from
Paddle 2.0, whose data-parallel all-reduce would add different ranks' bias slices together).

Paddle 2.0's split fails in dynamic mode (it looks its weight up in the static startup program);
here it says so, as Paddle 2.1 does.
"""

from __future__ import annotations

from ..dygraph.mode import in_dygraph_mode
from ..nn import Embedding, Linear
from ..static import default_main_program, default_startup_program
from ..tensor.gather_scatter import shard_index
from ..tensor.manipulation import squeeze, unsqueeze
from ..tensor_api import concat
from .collective import all_gather, all_reduce
from .fleet import fleet

_OPERATIONS = ["linear", "embedding"]


def split(
    x,
    size,
    operation,
    axis=0,
    num_partitions=1,
    gather_out=True,
    weight_attr=None,
    bias_attr=None,
    name=None,
):
    """The output of `operation` ('linear' or 'embedding') with its `size` weight split along `axis`
    into `num_partitions` parts, one per rank of the job (see the module)."""
    if not isinstance(size, (list, tuple)):
        raise AssertionError("The type of size for paddle.distributed.split must be list or tuple.")
    if len(size) != 2:
        raise AssertionError(f"Number of elements in size of paddle.distributed.split must be two; got {len(size)}.")
    if not isinstance(operation, str):
        raise AssertionError("The type of operation for paddle.distributed.split must be str.")
    if operation not in _OPERATIONS:
        raise AssertionError(
            f"The operation for paddle.distributed.split must be one of {_OPERATIONS}; got {operation!r}."
        )
    if in_dygraph_mode():
        raise ValueError(
            "paddle.distributed.split cannot be used in dynamic graph mode: it builds a static program "
            "(call paddle.enable_static() first)"
        )
    if fleet._role_maker is None:
        raise AssertionError("To use paddle.distributed.split, you must call fleet.init() firstly.")
    rank, nranks = fleet.worker_index(), fleet.worker_num()
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int) or num_partitions != nranks:
        raise ValueError(
            f"paddle.distributed.split: num_partitions; expected the job's {nranks} trainers (the parts are "
            f"joined over every rank of group 0), got {num_partitions!r}"
        )
    inner_rank = rank % num_partitions
    if operation == "embedding":
        if axis != 0:
            raise AssertionError("We only support to split the weight of embedding along the first axis now.")
        per_part = (size[0] + num_partitions - 1) // num_partitions
        if inner_rank == num_partitions - 1:
            per_part = size[0] - per_part * (num_partitions - 1)
        name = f"{name or 'emb'}_rank_{inner_rank}"
        return _parallel_embedding(x, per_part + 1, size, weight_attr, inner_rank, num_partitions, name)
    linear_size = _linear_part(x, size, axis, num_partitions)
    name = f"{name or 'fc'}_by_{'row' if axis == 0 else 'col'}_rank_{inner_rank}"  # Paddle's layer names
    return _parallel_linear(x, linear_size, axis, weight_attr, bias_attr, gather_out, name)


def _linear_part(x, size, axis, num_partitions) -> tuple[int, int]:
    """The shape of this rank's part of a linear weight, after Paddle's checks."""
    if axis == 0:
        if size[0] % num_partitions:
            raise AssertionError(
                f"Number of rows of the weight for linear ({size[0]}) must be divisible by num_partitions "
                f"({num_partitions})"
            )
        part = size[0] // num_partitions
        if x.shape[-1] != part:
            raise AssertionError(
                f"The width ({x.shape[-1]}) of the input x must be equal to the height ({part}) of the weight. "
                "Maybe you should split the input x using paddle.split."
            )
        return part, size[1]
    if axis == 1:
        if size[1] % num_partitions:
            raise AssertionError(
                f"Number of column of the weight for linear ({size[1]}) must be divisible by num_partitions "
                f"({num_partitions})"
            )
        return size[0], size[1] // num_partitions
    raise ValueError(f"The value of axis must be 0 or 1, but the value given is {axis}.")


def _parallel_linear(x, linear_size, axis, weight_attr, bias_attr, gather_out, name):
    linear = Linear(*linear_size, weight_attr=weight_attr, bias_attr=bias_attr, name=name)
    _mark_distributed(linear.weight)
    if axis == 1 and linear.bias is not None:
        _mark_distributed(linear.bias)
    out = linear(x)
    if not gather_out:
        return out
    if axis == 0:
        all_reduce(out, group=0)
        return out
    parts = []
    all_gather(parts, out, group=0)
    return concat(parts, axis=len(out.shape) - 1)


def _parallel_embedding(x, per_part_embeddings, origin_size, weight_attr, inner_rank, num_partitions, name):
    embedding = Embedding(per_part_embeddings, origin_size[1], padding_idx=per_part_embeddings - 1,
                          sparse=False, weight_attr=weight_attr, name=name)  # fmt: skip
    if len(x.shape) == 2:
        ids = unsqueeze(x, axis=-1)
    elif x.shape[-1] != 1:
        raise AssertionError(f"The last dimension size of x must be 1; got x of shape {list(x.shape)}.")
    else:
        ids = x
    shard = shard_index(ids, origin_size[0], num_partitions, inner_rank, per_part_embeddings - 1)
    if len(x.shape) == 2:
        shard = squeeze(shard, axis=-1)
    _mark_distributed(embedding.weight)
    out = embedding(shard)
    all_reduce(out, group=0)
    return out


def _mark_distributed(param) -> None:
    """A shard differs by rank: the startup's and the main program's parameter both say so."""
    for program in (default_startup_program(), default_main_program()):
        block = program.global_block()
        if block.has_var(param.name):
            block.var(param.name).is_distributed = True
    param.is_distributed = True
