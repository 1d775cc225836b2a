"""`tree_conv`: the tree-based convolution of Mou et al. (TBCNN), Paddle's op, slots and attrs.

For each tree of the batch, EdgeSet [B, E, 2] lists its (parent, child) edges over 1-based node
ids, read up to the first pair holding a 0; NodesVector [B, N, F] holds node i's features in row
i - 1; Filter is [F, 3, output_size, num_filters]. Node u's output row sums, over the nodes v of
its patch (u and its descendants less than max_depth levels below it), the features of v mixed by
v's three weights (Paddle's tree2col):
    eta_t = (max_depth - depth) / max_depth,
    eta_l = (1 - eta_t) * (0.5 if v is an only child else (index - 1) / (siblings - 1)),
    eta_r = (1 - eta_t) * (1 - eta_l),
with `depth` v's depth below u, `index` its 1-based place among its parent's `siblings` children.
Out [B, N, output_size, num_filters]: row u - 1 for each of the tree's nodes, zero rows after them.

The weights depend only on EdgeSet: they are worked out on the host into one [B, 3, N, N]
coefficient array C; the patches are C @ NodesVector and Out is the patches @ Filter (its
gradients the transposed products).
Paddle 1.8's kernel computes the NodesVector gradient with the output gradient's (output, weight)
axes in the wrong order when output_size * num_filters > 1; this gradient is the true one.
"""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import host, reshape, total

_ATTRS = {"max_depth": 2}


def _infer(ctx: InferContext) -> None:
    edges, nodes, w = ctx.input_var("EdgeSet"), ctx.input_var("NodesVector"), ctx.input_var("Filter")
    if ctx.attr("max_depth") < 1:
        raise ctx.error(f"max_depth {ctx.attr('max_depth')}: expected at least 1")
    if len(edges.shape) != 3 or edges.shape[2] != 2:
        raise ctx.error(f"EdgeSet '{edges.name}' {fmt_shape(edges.shape)}: expected [batch, edges, 2]")
    if len(nodes.shape) != 3:
        raise ctx.error(f"NodesVector '{nodes.name}' {fmt_shape(nodes.shape)}: expected [batch, nodes, features]")
    if len(w.shape) != 4 or w.shape[1] != 3 or (min(w.shape[0], nodes.shape[2]) >= 0 and w.shape[0] != nodes.shape[2]):
        raise ctx.error(
            f"Filter '{w.name}' {fmt_shape(w.shape)}: expected [features, 3, output_size, num_filters] with "
            f"features = NodesVector's {nodes.shape[2]}"
        )
    ctx.set_output("Out", (nodes.shape[0], nodes.shape[1], w.shape[2], w.shape[3]), nodes.dtype)


def _children(edges: np.ndarray) -> tuple[dict[int, list[int]], int]:
    """One tree's children lists (the edges before the first pair holding a 0) and its node count
    (pairs without a 0, plus the root), as Paddle's construct_tree counts them."""
    valid = (edges[:, 0] != 0) & (edges[:, 1] != 0)
    end = int(np.argmin(valid)) if not valid.all() else len(edges)
    children: dict[int, list[int]] = {}
    for parent, child in edges[:end].tolist():
        children.setdefault(parent, []).append(child)
    return children, int(valid.sum()) + 1


def _tree_coefficients(edges: np.ndarray, nodes: int, max_depth: int) -> np.ndarray:
    """[3, N, N]: C[:, u - 1, v - 1] = (eta_l, eta_r, eta_t) of node v in node u's patch."""
    children, count = _children(edges)
    if count > nodes:
        raise ValueError(f"tree_conv: EdgeSet describes {count} nodes; NodesVector has rows for {nodes}")
    c = np.zeros((3, nodes, nodes))
    for root in range(1, count + 1):
        stack = [(root, 1, 1, 0)]  # (node, index among siblings, siblings, depth below the root)
        while stack:
            v, index, siblings, depth = stack.pop()
            eta_t = (max_depth - depth) / max_depth
            eta_l = (1.0 - eta_t) * (0.5 if siblings == 1 else (index - 1.0) / (siblings - 1.0))
            c[:, root - 1, v - 1] += (eta_l, (1.0 - eta_t) * (1.0 - eta_l), eta_t)
            if depth + 1 < max_depth:
                kids = children.get(v, [])
                stack.extend((kid, i, len(kids), depth + 1) for i, kid in enumerate(kids, 1))
    return c


def _patches(xp, edges, nodes, max_depth: int):
    """(C [B, 3, N, N] for every tree of the batch; the patches [B, N, 3F], feature f's three
    weighted sums at 3f, 3f + 1, 3f + 2 as Paddle's tree2col lays them out)."""
    b, n, f = nodes.shape
    c = np.stack([_tree_coefficients(e, n, max_depth) for e in host(edges)])
    c = xp.asarray(c, dtype=nodes.dtype)
    sums = c @ reshape(xp, nodes, (b, 1, n, f))  # [B, 3, N, F]
    return c, reshape(xp, xp.permute_dims(sums, (0, 2, 3, 1)), (b, n, 3 * f))


def _kernel(xp, edges, nodes, filter, *, max_depth):
    f, _, o, k = filter.shape
    _, patches = _patches(xp, edges, nodes, max_depth)
    out = patches @ reshape(xp, filter, (3 * f, o * k))
    return reshape(xp, out, (*nodes.shape[:2], o, k))


def _grad_kernel(xp, edges, nodes, filter, dout, *, need, max_depth):
    (b, n, f), (o, k) = nodes.shape, filter.shape[2:]
    c, patches = _patches(xp, edges, nodes, max_depth)
    w = reshape(xp, filter, (3 * f, o * k))
    g = reshape(xp, dout, (b, n, o * k))
    dnodes = dfilter = None
    if "NodesVector@GRAD" in need:
        dpatches = xp.permute_dims(reshape(xp, g @ w.T, (b, n, f, 3)), (0, 3, 1, 2))  # [B, 3, N, F]
        dnodes = total(xp, xp.permute_dims(c, (0, 1, 3, 2)) @ dpatches, axis=1)
    if "Filter@GRAD" in need:
        dfilter = reshape(xp, reshape(xp, patches, (b * n, 3 * f)).T @ reshape(xp, g, (b * n, o * k)), filter.shape)
    return dnodes, dfilter


register_op(
    "tree_conv",
    inputs=("EdgeSet", "NodesVector", "Filter"),
    outputs=("Out",),
    attrs=_ATTRS,
    infer_shape=_infer,
    grad=make_grad_op(
        inputs=("EdgeSet", "NodesVector", "Filter", "Out@GRAD"), outputs=("NodesVector@GRAD", "Filter@GRAD")
    ),
    kernel=_kernel,
)
register_op(
    "tree_conv_grad",
    inputs=("EdgeSet", "NodesVector", "Filter", "Out@GRAD"),
    outputs=("NodesVector@GRAD", "Filter@GRAD"),
    attrs=_ATTRS,
    kernel=_grad_kernel,
    wants_outputs=True,
)
