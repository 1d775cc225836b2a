"""Cases for the creation ops, with NumPy oracles after Paddle 1.8's unit tests (test_linspace,
test_eye_op, test_diag, test_diag_embed, test_tril_triu_op, test_meshgrid_op). The random ops'
cases here are the draws whose result is certain (a range of one value, one-hot probabilities, a
crop as large as the instance); their distributions are tested in test_creation_products.py."""

import numpy as np

import fleetgraph.onnx.to_onnx_creation  # noqa: F401  (its rules, until onnx/export.py imports it)

from . import NOT_DIFFERENTIABLE, NOT_EXPORTED, case, rand

case(
    "linspace",
    {"Start": np.array([0.0], "float32"), "Stop": np.array([10.0], "float32"), "Num": np.array([5], "int32")},
    reference=lambda **a: {"Out": np.linspace(0, 10, 5)},
)
case(
    "linspace",
    {"Start": np.array([2.5]), "Stop": np.array([-1.0]), "Num": np.array([1], "int32")},
    name="one",
    reference=lambda **a: {"Out": np.array([2.5])},
)
case(
    "eye",
    {},
    attrs={"num_rows": 3, "num_columns": 5, "dtype": "int64"},
    reference=lambda **a: {"Out": np.eye(3, 5)},
)
case("eye", {}, attrs={"num_rows": 4}, name="square", reference=lambda **a: {"Out": np.eye(4)})
case("diag", {"Diagonal": rand(4, seed=1)}, reference=lambda Diagonal: {"Out": np.diag(Diagonal)})
case(
    "diag_embed",
    {"Input": rand(2, 3, seed=2)},
    reference=lambda Input, **a: {"Out": np.stack([np.diag(r) for r in Input])},
)
case(
    "diag_embed",
    {"Input": rand(2, 3, seed=3)},
    attrs={"offset": -1, "dim1": 0, "dim2": 2},
    name="below_dims_0_2",
    reference=lambda Input, **a: {"Out": np.stack([np.diag(r, -1) for r in Input], 1)},
)
case(
    "diag_embed",
    {"Input": np.arange(8, dtype="int64").reshape(2, 4)},
    attrs={"offset": 3, "dim1": -1, "dim2": 0},
    name="far_above_swapped",
    reference=lambda Input, **a: {"Out": np.stack([np.diag(r, 3) for r in Input]).transpose(2, 0, 1)},
)
for _lower, _diagonal in ((True, 0), (True, -2), (False, 1), (False, -1)):
    case(
        "tril_triu",
        {"X": rand(2, 4, 5, seed=4)},
        attrs={"lower": _lower, "diagonal": _diagonal},
        name=f"{'tril' if _lower else 'triu'}_{_diagonal}",
        reference=lambda X, lower, diagonal: {"Out": (np.tril if lower else np.triu)(X, diagonal)},
    )
case(
    "meshgrid",
    {"X": [rand(3, seed=5), rand(2, seed=6), rand(4, seed=7)]},
    outputs={"Out": 3},
    reference=lambda X: {"Out": list(np.meshgrid(*X, indexing="ij"))},
)

# random ops, at settings whose result is certain
case(
    "randint",
    {},
    attrs={"shape": [2, 3], "low": 7, "high": 8, "seed": 5},
    reference=lambda **a: {"Out": np.full((2, 3), 7)},
)
case("randperm", {}, attrs={"n": 1, "seed": 5}, reference=lambda **a: {"Out": np.array([0])})
case(  # the diagonal: flat elements i * (diag_step + 1), as Paddle's kernel
    "uniform_random_batch_size_like",
    {"Input": rand(4, 2, seed=8)},
    attrs={"shape": [-1, 3], "min": 0.5, "max": 0.5, "seed": 1, "diag_num": 2, "diag_step": 1, "diag_val": 2.0},
    reference=lambda Input, **a: {"Out": np.array([[2.0, 0.5, 2.0], [0.5] * 3, [0.5] * 3, [0.5] * 3])},
)
case(
    "gaussian_random_batch_size_like",
    {"Input": rand(2, 5, seed=9)},
    attrs={"shape": [3, -1], "input_dim_idx": 1, "output_dim_idx": 1, "mean": 1.5, "std": 0.0, "seed": 1},
    reference=lambda Input, **a: {"Out": np.full((3, 5), 1.5)},
)
case(
    "sampling_id",
    {"X": np.eye(4, dtype="float32")[[2, 0, 3]]},
    attrs={"seed": 3},
    reference=lambda X, **a: {"Out": np.array([2, 0, 3])},
)
case(
    "random_crop",
    {"X": rand(2, 3, 4, seed=10), "Seed": np.array([10], "int64")},
    attrs={"shape": [3, 4]},
    outputs={"Out": 1, "SeedOut": 1},
    reference=lambda X, Seed, **a: {"Out": X},
)

_NO_GRAD = "Paddle 1.8 registers no gradient for it (EmptyGradOpMaker)"
NOT_DIFFERENTIABLE.update(
    {
        "linspace": _NO_GRAD,
        "eye": "makes a constant: no input",
        "diag": _NO_GRAD,
        "diag_embed": _NO_GRAD,
        "randint": "a random draw: no input",
        "randperm": "a random draw: no input",
        "uniform_random_batch_size_like": "a random draw: reads only its input's shape",
        "gaussian_random_batch_size_like": "a random draw: reads only its input's shape",
        "sampling_id": "draws integer ids: piecewise constant, and Paddle registers no gradient for it",
        "random_crop": _NO_GRAD,
    }
)
NOT_EXPORTED.update(
    {
        "linspace": "Paddle 1.8's kernel adds the step one at a time in the output's dtype: ONNX's Range "
        "computes each value afresh, which differs in the last bits",
        "randint": "a random draw: ONNX's RandomUniform streams differ from the executor's, so values would not match",
        "randperm": "a random draw: ONNX has no random permutation",
        "uniform_random_batch_size_like": "a random draw: ONNX's RandomUniformLike streams differ from the executor's",
        "gaussian_random_batch_size_like": "a random draw: ONNX's RandomNormalLike streams differ from the executor's",
        "sampling_id": "a random draw: ONNX's Multinomial streams differ from the executor's",
        "random_crop": "a random draw keyed by a seed tensor the op writes back: no ONNX counterpart",
    }
)
