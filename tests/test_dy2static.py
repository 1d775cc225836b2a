"""dy2static: jit.to_static converts a forward's (or a function's) `if`, `while` and `for range` over
static Variables into cond / while programs that give the eager run's values, leaves conditions on
Python values as Python, and refuses what it cannot convert naming the source line."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
from fleetgraph.jit import ProgramTranslator


def _tensor(values, dtype="float32"):
    return paddle.to_tensor(np.asarray(values, dtype))


def _op_types(program) -> list[str]:
    return [op.type for block in program.blocks for op in block.ops]


class _SignedScale(paddle.nn.Layer):
    """Different ops per branch; `out` is first assigned in the branches."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        if paddle.mean(x) > 0:
            out = paddle.nn.functional.relu(y) * 2.0
        else:
            out = paddle.tanh(y) - 1.0
        return out


_POSITIVE, _NEGATIVE = np.full((2, 3), 0.5, "float32"), np.full((2, 3), -2.0, "float32")


def test_an_if_over_a_tensor_becomes_conditional_blocks_giving_each_branch_eager_values():
    net = _SignedScale()
    inputs = [_tensor(_POSITIVE), _tensor(_NEGATIVE)]
    eager = [net(x).numpy() for x in inputs]
    paddle.jit.to_static(net)
    types = _op_types(net._static_function.concrete_program(inputs[0]))
    assert types.count("conditional_block") == 2 and "select_input" in types
    assert "relu" in types and "tanh" in types  # both branches are in the program
    for x, want in zip(inputs, eager):
        np.testing.assert_allclose(net(x).numpy(), want, rtol=1e-6)


def _count_to(x, n):
    i = paddle.full([1], 0, "int64")
    while i < n:
        x = x * 2.0
        i = i + 1
    return x


def test_a_while_over_tensors_becomes_a_while_op_giving_the_eager_result():
    x, n = _tensor([1.0, -3.0]), _tensor([3], "int64")
    want = _count_to(x, n).numpy()
    static = paddle.jit.to_static(_count_to)
    np.testing.assert_allclose(static(x, n).numpy(), want)
    np.testing.assert_allclose(want, [8.0, -24.0])
    assert "while" in _op_types(static.concrete_program(x, n))
    np.testing.assert_allclose(static(x, _tensor([1], "int64")).numpy(), [2.0, -6.0])


def _weighted_sum(x, n):
    total = x * 0.0
    for i in range(n):
        total = total + x * paddle.cast(i, "float32")
    return total


def test_a_for_range_over_a_tensor_bound_is_a_while_loop():
    """(An eager Tensor is no Python int, so the eager reference is NumPy's 0x + 1x + 2x + 3x.)"""
    x = _tensor([1.0, 2.0])
    static = paddle.jit.to_static(_weighted_sum)
    np.testing.assert_allclose(static(x, _tensor([4], "int64")).numpy(), [6.0, 12.0])
    np.testing.assert_allclose(static(x, _tensor([2], "int64")).numpy(), [1.0, 2.0])
    assert "while" in _op_types(static.main_program)


def _clipped_steps(x, n):
    i = paddle.full([1], 0, "int64")
    while i < n:
        if paddle.mean(x) > 10.0:
            x = x - 7.0
        else:
            x = x + 3.0
        i = i + 1
    return x


def test_an_if_inside_a_while_nests_a_conditional_block_in_the_loop():
    x, n = _tensor([4.0, 6.0]), _tensor([5], "int64")
    want = _clipped_steps(x, n).numpy()
    static = paddle.jit.to_static(_clipped_steps)
    np.testing.assert_allclose(static(x, n).numpy(), want)
    program = static.main_program
    while_op = next(op for op in program.global_block().ops if op.type == "while")
    body = program.blocks[while_op.attr("sub_block")]
    assert "conditional_block" in [op.type for op in body.ops]


def _grow_until_large(x, n):
    i = paddle.full([1], 0, "int64")
    while i < n:
        if paddle.mean(x) > 5.0:
            break
        x = x + 1.0
        i = i + 1
    return x, i


def _double_the_small(x, n):
    for _ in range(n):
        x = x + 1.0
        if paddle.mean(x) > 3.0:
            continue
        x = x * 2.0
    return x


def _grow_in_range(x, n):
    for _ in range(n):
        if paddle.mean(x) > 4.0:
            break
        x = x + 1.0
    return x


def test_break_and_continue_under_a_static_if_become_flags_of_the_while():
    x, n = _tensor([1.0, 2.0]), _tensor([10], "int64")
    want = [t.numpy() for t in _grow_until_large(x, n)]
    np.testing.assert_allclose(want[0], [5.0, 6.0])
    static = paddle.jit.to_static(_grow_until_large)
    for got, expected in zip(static(x, n), want):
        np.testing.assert_allclose(got.numpy(), expected)
    assert "while" in _op_types(static.main_program)
    want = _double_the_small(x, 4).numpy()  # the eager run's range takes a Python int
    np.testing.assert_allclose(want, [7.0, 9.0])  # doubled once, then only grown
    static = paddle.jit.to_static(_double_the_small)
    np.testing.assert_allclose(static(x, _tensor([4], "int64")).numpy(), want)
    assert "while" in _op_types(static.main_program)
    want = _grow_in_range(x, 10).numpy()
    np.testing.assert_allclose(want, [4.0, 5.0])
    static = paddle.jit.to_static(_grow_in_range)
    np.testing.assert_allclose(static(x, _tensor([10], "int64")).numpy(), want)
    np.testing.assert_allclose(static(x, _tensor([1], "int64")).numpy(), [2.0, 3.0])


def _early_return(x):
    if paddle.mean(x) > 0:
        return x * 3.0, x
    y = x - 1.0
    if paddle.mean(x) < -1.0:
        return y * 2.0, y
    return y, x


def test_returns_inside_static_ifs_become_one_selected_return():
    static = paddle.jit.to_static(_early_return)
    for values in ([1.0, 2.0], [-0.5, 0.0], [-4.0, -2.0]):
        x = _tensor(values)
        for got, want in zip(static(x), _early_return(x)):
            np.testing.assert_allclose(got.numpy(), want.numpy())
    assert _op_types(static.main_program).count("conditional_block") >= 4


def _returns_one_or_two(x):
    if paddle.mean(x) > 0:
        return x
    return x, x


class _Flagged(paddle.nn.Layer):
    def __init__(self, double: bool) -> None:
        super().__init__()
        self.double = double

    def forward(self, x):
        if self.double and x.shape[-1] == 2:
            x = x * 2.0
        steps = 0
        for _ in range(3):
            steps += 1
        return x + float(steps)


@pytest.mark.parametrize("double", [True, False])
def test_a_condition_on_python_values_stays_python(double):
    net = _Flagged(double)
    x = _tensor([[1.0, 2.0]])
    want = net(x).numpy()
    paddle.jit.to_static(net)
    np.testing.assert_allclose(net(x).numpy(), want)
    types = _op_types(net._static_function.main_program)
    assert "conditional_block" not in types and "while" not in types
    assert types.count("scale") == (2 if double else 1)


def test_a_converted_layer_saves_and_loads_with_both_branches(tmp_path):
    net = _SignedScale()
    inputs = [_tensor(_POSITIVE), _tensor(_NEGATIVE)]
    eager = [net(x).numpy() for x in inputs]
    path = str(tmp_path / "signed")
    paddle.jit.save(net, path, input_spec=[paddle.jit.InputSpec([None, 3], "float32")])
    loaded = paddle.jit.load(path)
    for x, want in zip(inputs, eager):
        np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6)


def test_program_translator_disabled_runs_the_dynamic_code_and_traces_python_control_flow():
    translator = ProgramTranslator()
    net = _SignedScale()
    x = _tensor(_NEGATIVE)
    want = net(x).numpy()
    translator.enable(False)
    try:
        paddle.jit.to_static(net)
        np.testing.assert_allclose(net(x).numpy(), want, rtol=1e-6)
        assert not net._static_function._traced  # nothing was traced
        traced = paddle.jit.trace(net, [x])
        assert "conditional_block" not in _op_types(traced.program)
    finally:
        translator.enable(True)
    with pytest.raises(TypeError, match="expected a bool"):
        translator.enable(1)


def test_get_code_shows_the_converted_calls():
    code = ProgramTranslator().get_code(_clipped_steps)
    assert "convert_while_loop" in code and "convert_ifelse" in code


def test_a_decorated_forward_is_converted_per_instance():
    class Decorated(paddle.nn.Layer):
        @paddle.jit.to_static
        def forward(self, x):
            if paddle.mean(x) > 0:
                x = x + 1.0
            else:
                x = x - 1.0
            return x

    net = Decorated()
    np.testing.assert_allclose(net(_tensor([1.0])).numpy(), [2.0])
    np.testing.assert_allclose(net(_tensor([-1.0])).numpy(), [-2.0])
    assert "conditional_block" in _op_types(net._static_function.main_program)


def _one_branch(x):
    if paddle.mean(x) > 0:
        y = x + 1.0
    return y  # noqa: F821


def _returns_in_loop(x, n):
    i = paddle.full([1], 0, "int64")
    while i < n:
        return x
    return x - 1.0


def _two_shapes(x):
    if paddle.mean(x) > 0:
        y = (x, x)
    else:
        y = x
    return y


def _made_in_loop(x, n):
    for _ in range(n):
        made = x * 2.0
    return made


@pytest.mark.parametrize(
    "function, message",
    [
        (_one_branch, r"test_dy2static.py:\d+: `if paddle.mean\(x\) > 0:`: 'y' is assigned in only one branch"),
        (_returns_in_loop, r"test_dy2static.py:\d+: `while i < n:`: a return inside a loop over a static test"),
        (_two_shapes, r"the branches give 'y' different structures; expected the same, got tuple of 2 and"),
        (_returns_one_or_two, r"test_dy2static.py:\d+: `return x, x`: the branches give the returned value different"),
        (_made_in_loop, r"'made' is first assigned inside the loop and used after it"),
    ],
)
def test_what_cannot_convert_is_refused_naming_the_source_line(function, message):
    static = paddle.jit.to_static(function)
    args = [_tensor([1.0])] + ([_tensor([2], "int64")] if function in (_returns_in_loop, _made_in_loop) else [])
    with pytest.raises(paddle.FleetgraphError, match=message):
        static(*args)


def test_python_control_flow_keeps_python_semantics_when_converted():
    def last_index(k):
        i = -1
        for i in range(k):  # noqa: B007  (the index after the loop is what is checked)
            pass
        while k > 10:
            k -= 1
        for j in range(100):
            if j == k:
                break
        while True:
            if j > 7:
                return i, k, j
            j += 5

    converted = ProgramTranslator().get_func(last_index)
    assert converted is not last_index and "convert_for_range" in ProgramTranslator().get_code(last_index)
    assert converted(3) == (2, 3, 8)
    assert converted(0) == (-1, 0, 10)
    assert converted(12) == (11, 10, 10)
