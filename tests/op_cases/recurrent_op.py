"""Cases for rnn_memory_helper (StaticRNN's identity between a step's values and the recurrent op's
outputs and states); the recurrent op runs a step block, covered by tests/test_static_rnn.py."""

from . import COVERED_ELSEWHERE, NOT_EAGER, NOT_EXPORTED, case, rand

case("rnn_memory_helper", {"X": rand(3, 4, seed=1)}, attrs={"dtype": "float64"}, reference=lambda X, **a: {"Out": X})

COVERED_ELSEWHERE["recurrent"] = (
    "tests/test_static_rnn.py: values and gradients against NumPy loops and central differences, training "
    "against the model unrolled"
)
NOT_EAGER.update(
    {
        "recurrent": "eager mode has no blocks; Paddle's StaticRNN is static only",
        "rnn_memory_helper": "StaticRNN's plumbing inside a step block, which eager mode does not have",
    }
)
NOT_EXPORTED.update(
    {
        "recurrent": "no ONNX exporter yet (Loop with a sub-graph and scan outputs)",
        "rnn_memory_helper": "StaticRNN's plumbing: exported with the recurrent op, or not at all",
    }
)
