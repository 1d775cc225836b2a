"""Cases for the sampled losses, nce and hierarchical_sigmoid, with the NumPy references of Paddle's
test_nce.py and test_hsigmoid_op.py (one Python loop per sample and per tree node)."""

import math

import numpy as np

from . import NOT_EXPORTED, case, rand

NOT_EXPORTED.update(
    dict.fromkeys(
        ("nce", "hierarchical_sigmoid"),
        "training only: a sampled loss over the output vocabulary, which inference replaces by a full "
        "softmax or the tree's scores; export prunes the program to inference (ir/prune.py)",
    )
)

# -- nce: test_nce.py's reference, generalised to the log-uniform and custom samplers' P(class) ------


def _probability(label, classes, sampler, probs):
    if sampler == 0:
        return 1.0 / classes
    if sampler == 1:
        return math.log((label + 2.0) / (label + 1.0)) / math.log(classes)
    return float(probs[label])


def naive_nce(
    Input,
    Label,
    Weight,
    num_total_classes,
    custom_neg_classes,
    sampler,
    Bias=None,
    SampleWeight=None,
    CustomDistProbs=None,
    **a,
):
    rows, true = Input.shape[0], Label.shape[1]
    labels = np.concatenate([Label, np.tile(custom_neg_classes, (rows, 1))], axis=1)
    logits, cost = np.zeros(labels.shape), np.zeros((rows, 1))
    for i in range(rows):
        w = 1.0 if SampleWeight is None else SampleWeight.ravel()[i]
        for j, c in enumerate(labels[i]):
            z = np.dot(Input[i], Weight[c]) + (0.0 if Bias is None else Bias.ravel()[c])
            o = logits[i, j] = 1.0 / (1.0 + np.exp(-z))
            b = _probability(c, num_total_classes, sampler, CustomDistProbs) * len(custom_neg_classes)
            cost[i, 0] += w * (-np.log(o / (o + b)) if j < true else -np.log(b / (o + b)))
    return {"Cost": cost, "SampleLogits": logits, "SampleLabels": labels}


_CLASSES = 12
_DIST = np.random.default_rng(3).dirichlet(np.ones(_CLASSES))
_NCE_OUTPUTS = {"Cost": 1, "SampleLogits": 1, "SampleLabels": 1}
_NO_GRAD = ("SampleWeight", "CustomDistProbs", "CustomDistAlias", "CustomDistAliasProbs")

for _name, _true, _sampler, _extra in (
    ("uniform_with_bias_and_weights", 1, 0, ("Bias", "SampleWeight")),  # TestNCE
    ("two_true_classes", 2, 0, ("Bias",)),  # TestNCECase1Tensor
    ("log_uniform_no_bias", 1, 1, ()),
    ("custom_dist", 1, 2, ("Bias",)),
):
    _labels = np.random.default_rng(len(_name)).integers(0, _CLASSES, (5, _true))
    _inputs = {"Input": rand(5, 4), "Label": _labels.astype(np.int64), "Weight": rand(_CLASSES, 4, seed=1)}
    if "Bias" in _extra:
        _inputs["Bias"] = rand(_CLASSES, 1, seed=2)
    if "SampleWeight" in _extra:
        _inputs["SampleWeight"] = rand(5, 1, low=0.5, high=1.5, seed=3)
    if _sampler == 2:  # the layer's alias tables are not read when custom_neg_classes fixes the samples
        _inputs["CustomDistProbs"] = _DIST.astype(np.float32)
        _inputs["CustomDistAlias"] = np.full(_CLASSES, -1, dtype=np.int32)
        _inputs["CustomDistAliasProbs"] = np.ones(_CLASSES, dtype=np.float32)
    case(
        "nce",
        _inputs,
        attrs={
            "num_total_classes": _CLASSES,
            "num_neg_samples": 3,
            "custom_neg_classes": [0, 7, 3],
            "sampler": _sampler,
        },
        outputs=_NCE_OUTPUTS,
        name=_name,
        no_grad=_NO_GRAD,
        loss_outputs=("Cost",),
        reference=naive_nce,
    )

# -- hierarchical_sigmoid: test_hsigmoid_op.py's reference, default and custom trees ----------------


def _default_path(num_classes, label):
    """Paddle's CodeTable: class c is coded c + num_classes; (node, bit) of each level."""
    c = int(label) + num_classes
    return [((c >> (j + 1)) - 1, (c >> j) & 1) for j in range(c.bit_length() - 1)]


def _custom_path(table, code):
    path = []
    for node, bit in zip(table, code):
        if node < 0:
            break
        path.append((int(node), int(bit)))
    return path


def naive_hsigmoid(X, W, Label, num_classes, PathTable=None, PathCode=None, Bias=None, **a):
    width = (num_classes - 1).bit_length() if PathTable is None else PathTable.shape[1]
    pre, out = np.zeros((X.shape[0], width)), np.zeros((X.shape[0], 1))
    for i in range(X.shape[0]):
        if PathTable is None:
            path = _default_path(num_classes, Label.ravel()[i])
        else:
            path = _custom_path(PathTable[i], PathCode[i])
        for j, (node, bit) in enumerate(path):
            pre[i, j] = np.clip(np.dot(W[node], X[i]) + (0.0 if Bias is None else Bias[node, 0]), -40.0, 40.0)
            out[i, 0] -= pre[i, j] if bit else 0.0
    pre = np.log(1.0 + np.exp(pre))
    return {"Out": out + pre.sum(axis=1, keepdims=True), "PreOut": pre}


_PATH_TABLE = np.array([(0, 2, -1, -1, -1), (0, 1, 3, -1, -1), (0, 1, 4, -1, -1), (0, 2, -1, -1, -1)])
_PATH_CODE = np.array([(0, 0, -1, -1, -1), (1, 1, 1, -1, -1), (1, 0, 0, -1, -1), (0, 1, -1, -1, -1)])
for _name, _classes, _inputs in (
    (  # TestHSigmoidOp, smaller
        "default_tree",
        11,
        {
            "X": rand(6, 4),
            "W": rand(10, 4, seed=1),
            "Label": np.array([[0], [3], [10], [5], [9], [7]], dtype=np.int64),
            "Bias": rand(10, 1, seed=2),
        },
    ),
    (
        "default_tree_no_bias",
        4,
        {"X": rand(3, 2), "W": rand(3, 2, seed=1), "Label": np.array([[1], [0], [3]], dtype=np.int64)},
    ),
    (  # TestHSigmoidOpWithCostumTree: Paddle's paths of classes 1, 2, 5 and 6 of a Huffman tree
        "custom_tree",
        6,
        {
            "X": rand(4, 8),
            "W": rand(5, 8, seed=1),
            "Label": np.array([0, 1, 4, 5], dtype=np.int64),
            "PathTable": _PATH_TABLE,
            "PathCode": _PATH_CODE,
            "Bias": rand(5, 1, seed=2),
        },
    ),
):
    case(
        "hierarchical_sigmoid",
        _inputs,
        attrs={"num_classes": _classes},
        outputs={"Out": 1, "PreOut": 1},
        name=_name,
        loss_outputs=("Out",),
        reference=naive_hsigmoid,
    )
