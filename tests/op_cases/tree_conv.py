"""Cases for tree_conv: Paddle 1.8.5's test_tree_conv_op.py tree and naive reference (patches built by
recursion, a tensordot per patch node), with several outputs and filters, a deeper filter, and
edge lists ended by zero pairs (a tree per batch row)."""

import numpy as np

from . import NOT_EXPORTED, case, rand


def collect_node_patch(og, max_depth):
    """test_tree_conv_op.py's patches: (node, index, siblings, depth, max_depth) per patch node."""

    def gen(node):
        collected = [(node, 1, 1, 0, max_depth)]

        def recurse_helper(node, depth):
            if depth > max_depth:
                return
            siblings = len(og[node])
            for idx, c in enumerate(og[node], 1):
                if depth + 1 < max_depth:
                    collected.append((c, idx, siblings, depth + 1, max_depth))
                    recurse_helper(c, depth + 1)

        recurse_helper(node, 0)
        return collected

    return [gen(u) for u in range(1, len(og))]


def naive_tree_conv(EdgeSet, NodesVector, Filter, *, max_depth, **a):
    n = NodesVector.shape[1]
    w = np.transpose(Filter, axes=[1, 0, 2, 3])
    out = np.zeros((NodesVector.shape[0], n, Filter.shape[2], Filter.shape[3]))
    for b, edges in enumerate(EdgeSet):
        pairs = [e for e in edges.tolist() if 0 not in e]
        og = [[] for _ in range(len(pairs) + 2)]
        for parent, child in pairs:
            og[parent].append(child)
        for i, patch in enumerate(collect_node_patch(og, max_depth)):
            for v in patch:
                eta_t = float(v[4] - v[3]) / float(v[4])
                eta_l = (1.0 - eta_t) * (0.5 if v[2] == 1 else float(v[1] - 1.0) / float(v[2] - 1.0))
                eta_r = (1.0 - eta_t) * (1.0 - eta_l)
                eta = np.array([eta_l, eta_r, eta_t]).reshape((3, 1))
                x = NodesVector[b][v[0] - 1].reshape((1, 1, -1))
                out[b, i] += np.tensordot(x, np.tensordot(eta, w, axes=([0], [0])), axes=2)[0]
    return {"Out": out}


_PADDLE_TREE = [1, 2, 1, 3, 1, 4, 1, 5, 2, 6, 2, 7, 2, 8, 4, 9, 4, 10, 5, 11, 6, 12, 6, 13, 9, 14, 9, 15, 9, 16, 9, 17]
_EDGES = np.tile(np.array(_PADDLE_TREE, dtype=np.int32).reshape(1, 16, 2), (2, 1, 1))
for _name, _out, _filters, _depth in (("paddle", 1, 1, 2), ("wide", 2, 3, 2), ("deep", 2, 1, 3)):
    case(
        "tree_conv",
        {"EdgeSet": _EDGES, "NodesVector": rand(2, 17, 3, seed=1), "Filter": rand(3, 3, _out, _filters, seed=2)},
        attrs={"max_depth": _depth},
        reference=naive_tree_conv,
        no_grad=("EdgeSet",),
        name=_name,
    )

# two trees of different sizes in one batch, each edge list ended by zero pairs; more rows than nodes
_SMALL = np.zeros((2, 6, 2), dtype=np.int32)
_SMALL[0, :4] = [[1, 2], [1, 3], [2, 4], [3, 5]]
_SMALL[1, :2] = [[1, 2], [2, 3]]
case(
    "tree_conv",
    {"EdgeSet": _SMALL, "NodesVector": rand(2, 7, 4, seed=3), "Filter": rand(4, 3, 2, 2, seed=4)},
    attrs={"max_depth": 3},
    reference=naive_tree_conv,
    no_grad=("EdgeSet",),
    name="padded_edges",
)

NOT_EXPORTED["tree_conv"] = "no ONNX exporter: each tree's patches are worked out on the host from EdgeSet's values"
