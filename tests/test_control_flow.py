"""Branches and loops in static programs (conditional_block, while and the layers over them): values
against NumPy, gradients against central differences, training against the same model unrolled
into a straight line, verify's refusals, the nested dump, and the same layers in dynamic mode."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import VerifyError, verify

L = fluid.layers


def _run(main, startup, feed, fetch, scope=None):
    exe = fluid.Executor(fluid.CPUPlace())
    scope = scope or fluid.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)


def _central_differences(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    x = x.astype("float64")
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[k] = eps
        grad[k] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def _programs():
    main, startup = fluid.Program(), fluid.Program()
    return main, startup, fluid.program_guard(main, startup)


# -- while_loop -------------------------------------------------------------------------------------


def _iterate(x, steps=10):
    for _ in range(steps):
        x = x * x * 0.5 + 0.1
    return x


def test_while_loop_counts_as_paddles_example():
    main, startup, guard = _programs()
    with guard:
        i = L.fill_constant([1], "int64", 0)
        ten = L.fill_constant([1], "int64", 10)
        i, ten = L.while_loop(lambda i, ten: i < ten, lambda i, ten: [i + 1, ten], [i, ten])
    assert _run(main, startup, {}, [i])[0].tolist() == [10]


def test_while_loop_value_and_gradient_match_numpy_and_central_differences():
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [3], "float32")
        x.stop_gradient = False
        i = L.fill_constant([1], "int64", 0)
        n = L.fill_constant([1], "int64", 10)
        i, y = L.while_loop(
            lambda i, y: L.less_than(i, n), lambda i, y: [L.increment(i, in_place=False), y * y * 0.5 + 0.1], [i, x]
        )
        loss = L.mean(y)
        (grad,) = fluid.gradients(loss, x)
    x0 = np.array([0.5, 1.0, 1.2], "float32")
    value, got = _run(main, startup, {"x": x0}, [y, grad])
    np.testing.assert_allclose(value, _iterate(x0.astype("float64")), rtol=1e-5)
    want = _central_differences(lambda v: _iterate(v).mean(), x0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-10)


def test_a_parameter_read_in_every_iteration_gets_the_sum_of_its_gradients():
    """h <- tanh(h * w + x) five times: w's gradient sums over the iterations, h0's chains through them."""
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [2, 3], "float32")
        h0 = fluid.data("h0", [2, 3], "float32")
        h0.stop_gradient = False
        w = L.create_parameter([3], "float32", name="w", default_initializer=paddle.nn.initializer.Constant(0.7))
        i = L.fill_constant([1], "int64", 0)
        n = L.fill_constant([1], "int64", 5)

        def body(i, h):
            return [L.increment(i, in_place=False), L.tanh(L.elementwise_mul(h, w) + x)]

        i, h = L.while_loop(lambda i, h: L.less_than(i, n), body, [i, h0])
        loss = L.reduce_sum(L.square(h))
        grad_w, grad_h0 = fluid.gradients(loss, [w, h0])
    rng = np.random.default_rng(0)
    x0, hinit = rng.standard_normal((2, 3)).astype("float32"), rng.standard_normal((2, 3)).astype("float32")

    def forward(w_, h_):
        for _ in range(5):
            h_ = np.tanh(h_ * w_ + x0)
        return (h_**2).sum()

    gw, gh = _run(main, startup, {"x": x0, "h0": hinit}, [grad_w, grad_h0])
    np.testing.assert_allclose(gw, _central_differences(lambda v: forward(v, hinit), np.full(3, 0.7)), rtol=1e-4)
    np.testing.assert_allclose(gh, _central_differences(lambda v: forward(0.7, v), hinit), rtol=1e-4, atol=1e-8)


def test_fetching_after_backward_sees_the_loops_results():
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [2], "float32")
        x.stop_gradient = False
        i = L.fill_constant([1], "int64", 0)
        n = L.fill_constant([1], "int64", 3)
        i, y = L.while_loop(
            lambda i, y: L.less_than(i, n), lambda i, y: [L.increment(i, in_place=False), y * 2.0], [i, x]
        )
        fluid.gradients(L.mean(y), x)
    got_i, got_y = _run(main, startup, {"x": np.array([1.0, 2.0], "float32")}, [i, y])
    assert got_i.tolist() == [3]
    np.testing.assert_allclose(got_y, [8.0, 16.0])


def test_while_class_counts_as_paddles_docstring():
    main, startup, guard = _programs()
    with guard:
        i = L.fill_constant([1], "int64", 0)
        loop_len = L.fill_constant([1], "int64", 10)
        cond = L.less_than(i, loop_len)
        loop = L.While(cond=cond)
        with loop.block():
            i = L.increment(x=i, value=1, in_place=True)
            L.less_than(x=i, y=loop_len, cond=cond)
    assert _run(main, startup, {}, [i])[0].tolist() == [10]


def test_a_loop_whose_condition_starts_false_runs_no_iteration_and_passes_gradients_through():
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [2], "float32")
        x.stop_gradient = False
        i = L.fill_constant([1], "int64", 5)
        n = L.fill_constant([1], "int64", 3)
        i, y = L.while_loop(lambda i, y: L.less_than(i, n), lambda i, y: [i + 1, y * 3.0], [i, x])
        (grad,) = fluid.gradients(L.reduce_sum(y * 2.0), x)
    value, got = _run(main, startup, {"x": np.array([1.0, 2.0], "float32")}, [y, grad])
    np.testing.assert_allclose(value, [1.0, 2.0])
    np.testing.assert_allclose(got, [2.0, 2.0])


# -- cond, case, switch_case, Switch ---------------------------------------------------------------


@pytest.mark.parametrize("last", [0.5, 2.0], ids=["true_branch", "false_branch"])
def test_cond_takes_one_branch_and_its_gradient(last):
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [3], "float32")
        x.stop_gradient = False
        pred = L.less_than(L.reduce_sum(x), L.fill_constant([1], "float32", 1.0))
        out = L.cond(pred, lambda: x * 3.0, lambda: x * x)
        (grad,) = fluid.gradients(L.mean(out), x)
    x0 = np.array([0.1, 0.2, last], "float32")
    value, got = _run(main, startup, {"x": x0}, [out, grad])
    taken = (lambda v: v * 3.0) if x0.sum() < 1.0 else (lambda v: v * v)
    np.testing.assert_allclose(value, taken(x0), rtol=1e-6)
    np.testing.assert_allclose(got, _central_differences(lambda v: taken(v).mean(), x0), rtol=1e-5)


def test_cond_returns_paddles_docstring_structure():
    main, startup, guard = _programs()
    with guard:
        a = L.fill_constant([1], "float32", 1.23)
        b = L.fill_constant([1], "float32", 1.24)

        def true_func():
            return L.fill_constant([1, 2], "int32", 1), L.fill_constant([2, 3], "bool", True)

        def false_func():
            return L.fill_constant([3, 4], "float32", 3), L.fill_constant([4, 5], "int64", 2)

        out = L.cond(L.less_than(a, b), true_func, false_func)
    first, second = _run(main, startup, {}, list(out))
    assert first.tolist() == [[1, 1]] and second.tolist() == [[True] * 3] * 2


def test_cond_inside_a_loop_differentiates_per_iteration():
    """y <- y * 2 while the step is even, else y <- y + 1: the branch taken changes between iterations."""
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [2], "float32")
        x.stop_gradient = False
        i = L.fill_constant([1], "int64", 0)
        n = L.fill_constant([1], "int64", 4)
        two = L.fill_constant([1], "int64", 2)
        zero = L.fill_constant([1], "int64", 0)

        def body(i, y):
            even = L.equal(L.elementwise_mod(i, two), zero) if hasattr(L, "elementwise_mod") else L.less_than(i, two)
            return [i + 1, L.cond(even, lambda: y * y, lambda: y + 1.0)]

        i, y = L.while_loop(lambda i, y: L.less_than(i, n), body, [i, x])
        (grad,) = fluid.gradients(L.reduce_sum(y), x)
    x0 = np.array([0.3, -0.7], "float32")
    even = (lambda k: k % 2 == 0) if hasattr(L, "elementwise_mod") else (lambda k: k < 2)

    def forward(v):
        for k in range(4):
            v = v * v if even(k) else v + 1.0
        return v

    value, got = _run(main, startup, {"x": x0}, [y, grad])
    np.testing.assert_allclose(value, forward(x0.astype("float64")), rtol=1e-5)
    np.testing.assert_allclose(got, _central_differences(lambda v: forward(v).sum(), x0), rtol=1e-4)


def test_case_picks_the_first_true_pair_as_paddles_docstring():
    main, startup, guard = _programs()
    with guard:
        x = L.fill_constant([1], "float32", 0.3)
        y = L.fill_constant([1], "float32", 0.1)
        z = L.fill_constant([1], "float32", 0.2)

        def fn(v):
            return lambda: L.fill_constant([1, 2], "float32", v)

        out_1 = L.case([(L.less_than(z, x), fn(1)), (L.less_than(x, y), fn(2))], default=fn(3))
        out_2 = L.case([(L.less_than(z, y), fn(1)), (L.less_than(x, y), fn(2))])
    got_1, got_2 = _run(main, startup, {}, [out_1, out_2])
    assert got_1.tolist() == [[1, 1]] and got_2.tolist() == [[2, 2]]


def test_switch_case_picks_by_index_as_paddles_docstring():
    main, startup, guard = _programs()
    with guard:
        index_1 = L.fill_constant([1], "int32", 1)
        index_2 = L.fill_constant([1], "int32", 2)

        def fn(v):
            return lambda: L.fill_constant([1, 2], "float32", v)

        out_1 = L.switch_case(index_1, ((1, fn(1)), (2, fn(2))), default=fn(3))
        out_2 = L.switch_case(index_2, [(1, fn(1)), (2, fn(2))], default=fn(3))
        out_3 = L.switch_case(index_2, {1: fn(1), 2: fn(2)})  # no default: the largest key's
        out_4 = L.switch_case(L.fill_constant([1], "int64", 7), [fn(1), fn(2)])
    got = _run(main, startup, {}, [out_1, out_2, out_3, out_4])
    assert [g[0, 0] for g in got] == [1, 2, 2, 2]


@pytest.mark.parametrize("step, want", [(3.0, 1.0), (12.0, 0.5), (30.0, 0.1)])
def test_switch_runs_the_first_case_that_holds_else_the_default(step, want):
    main, startup, guard = _programs()
    with guard:
        counter = L.fill_constant([1], "float32", step)
        lr = L.create_global_var([1], 0.0, "float32", persistable=True, name="lr")
        with L.Switch() as switch:
            with switch.case(L.less_than(counter, L.fill_constant([1], "float32", 10.0))):
                L.assign(L.fill_constant([1], "float32", 1.0), lr)
            with switch.case(L.less_than(counter, L.fill_constant([1], "float32", 20.0))):
                L.assign(L.fill_constant([1], "float32", 0.5), lr)
            with switch.default():
                L.assign(L.fill_constant([1], "float32", 0.1), lr)
    np.testing.assert_allclose(_run(main, startup, {}, [lr])[0], [want], rtol=1e-7)


# -- training: a loop against the same model unrolled -----------------------------------------------


def _rnn_like(unrolled: bool, steps: int = 3):
    """h <- tanh(fc(h) + x) `steps` times and a regression loss, as a while_loop or unrolled."""
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [4, 3], "float32")
        label = fluid.data("label", [4, 1], "float32")
        init = paddle.nn.initializer.Constant
        w = L.create_parameter(
            [3, 3], "float32", name="w", default_initializer=paddle.nn.initializer.Uniform(-0.5, 0.5)
        )
        b = L.create_parameter([3], "float32", name="b", default_initializer=init(0.1))

        def cell(h):
            return L.tanh(L.elementwise_add(L.matmul(h, w), b) + x)

        if unrolled:
            h = x
            for _ in range(steps):
                h = cell(h)
        else:
            i = L.fill_constant([1], "int64", 0)
            n = L.fill_constant([1], "int64", steps)
            # the loop variable is overwritten by each iteration: a copy, so the body still adds the input
            _, h = L.while_loop(lambda i, h: L.less_than(i, n), lambda i, h: [i + 1, cell(h)], [i, L.assign(x)])
        pred = L.fc(h, 1, param_attr=fluid.ParamAttr(name="fc_w", initializer=init(0.2)), bias_attr=False)
        loss = L.mean(L.square_error_cost(pred, label))
    return main, startup, loss


W0 = np.random.default_rng(2).uniform(-0.5, 0.5, (3, 3)).astype("float32")
OPTIMIZERS = {
    "sgd": lambda: fluid.optimizer.SGD(0.1),
    "momentum": lambda: fluid.optimizer.Momentum(0.1, momentum=0.9),
    "adam": lambda: fluid.optimizer.Adam(0.05),
    "adagrad": lambda: fluid.optimizer.Adagrad(0.1),
    "rmsprop": lambda: fluid.optimizer.RMSProp(0.01),
}


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_minimize_through_a_loop_trains_as_the_unrolled_model(optimizer):
    rng = np.random.default_rng(1)
    feed = {"x": rng.standard_normal((4, 3)).astype("float32"), "label": rng.standard_normal((4, 1)).astype("float32")}
    runs = {}
    for unrolled in (False, True):
        main, startup, loss = _rnn_like(unrolled)
        with fluid.program_guard(main, startup):
            OPTIMIZERS[optimizer]().minimize(loss)
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup, scope=scope)
        scope.find_var("w").get_tensor().set(W0, fluid.CPUPlace())  # both start from the same parameters
        w0 = np.array(scope.find_var("w").get_tensor(), copy=True)
        losses = [exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0].item() for _ in range(4)]
        runs[unrolled] = (w0, losses, np.array(scope.find_var("w").get_tensor()))
    (w0_loop, loss_loop, w_loop), (w0_flat, loss_flat, w_flat) = runs[False], runs[True]
    np.testing.assert_array_equal(w0_loop, w0_flat)
    np.testing.assert_allclose(loss_loop, loss_flat, rtol=1e-5)
    np.testing.assert_allclose(w_loop, w_flat, rtol=1e-5, atol=1e-7)
    assert loss_loop[-1] < loss_loop[0]


# -- verify, the dump -------------------------------------------------------------------------------


def test_verify_refuses_a_while_whose_condition_is_not_a_bool_scalar():
    main, startup, guard = _programs()
    with guard:
        i = L.fill_constant([1], "int64", 0)
        n = L.fill_constant([1], "int64", 3)
        L.while_loop(lambda i: L.less_than(i, n), lambda i: [i + 1], [i])
    loop = next(op for op in main.global_block().ops if op.type == "while")
    loop.inputs["Condition"] = [n.name]
    with pytest.raises(VerifyError, match="condition .* is int64 .*expected a bool with one element"):
        verify(main)


def test_verify_refuses_a_sub_block_writing_an_outer_variable_it_does_not_declare():
    main, startup, guard = _programs()
    with guard:
        x = L.fill_constant([2], "float32", 1.0)
        other = L.fill_constant([2], "float32", 0.0)
        pred = L.less_than(L.fill_constant([1], "float32", 0.0), L.fill_constant([1], "float32", 1.0))
        block = L.ConditionalBlock([pred], is_scalar_condition=True)
        with block.block():
            L.assign(x * 2.0, x)
    branch = next(op for op in main.global_block().ops if op.type == "conditional_block")
    assert branch.output("Out") == [x.name]
    verify(main)
    main.block(branch.attrs["sub_block"]).append_op("assign", {"X": [x]}, {"Out": [other]})
    with pytest.raises(
        VerifyError, match=f"writes '{other.name}' of an outer block, which the op does not list in Out"
    ):
        verify(main)


def test_verify_accepts_programs_with_loops_and_their_gradients():
    main, startup, loss = _rnn_like(unrolled=False)
    with fluid.program_guard(main, startup):
        fluid.optimizer.SGD(0.1).minimize(loss)
    verify(main)


def test_printing_a_program_nests_each_sub_block_under_its_op():
    main, startup, guard = _programs()
    with guard:
        i = L.fill_constant([1], "int64", 0)
        L.while_loop(lambda i: L.less_than(i, L.fill_constant([1], "int64", 3)), lambda i: [i + 1], [i])
    text = str(main)
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if "= while(" in line)
    assert lines[at + 1].startswith("        { // block_idx:1  parent_idx:0")
    assert text.count("block_idx:1") == 1


# -- dynamic mode ------------------------------------------------------------------------------------


def test_the_same_layers_run_as_python_control_flow_in_dynamic_mode():
    paddle.disable_static()
    try:
        x = paddle.to_tensor(np.array([0.5, 1.0], "float32"), stop_gradient=False)
        i = paddle.to_tensor(np.array([0], "int64"))
        n = paddle.to_tensor(np.array([3], "int64"))
        i, y = L.while_loop(lambda i, y: i < n, lambda i, y: [i + 1, y * y], [i, x])
        out = L.cond(L.reduce_sum(y) < 1.0, lambda: y * 3.0, lambda: y + 1.0)
        L.reduce_sum(out).backward()
        assert i.numpy().tolist() == [3]
        np.testing.assert_allclose(out.numpy(), np.array([0.5, 1.0]) ** 8 + 1.0, rtol=1e-6)
        np.testing.assert_allclose(x.grad, 8 * np.array([0.5, 1.0]) ** 7, rtol=1e-5)
    finally:
        paddle.enable_static()


def test_loops_and_branches_train_on_the_strict_array_api():
    xps = pytest.importorskip("array_api_strict")
    from fleetgraph.executor.place import Place

    class StrictPlace(Place):
        def array_module(self):
            return xps

    results = {}
    for xp in (np, xps):
        main, startup, loss = _rnn_like(unrolled=False)
        with fluid.program_guard(main, startup):
            fluid.optimizer.SGD(0.1).minimize(loss)
        place = StrictPlace() if xp is xps else fluid.CPUPlace()
        exe = fluid.Executor(place)
        scope = fluid.Scope()
        exe.run(startup, scope=scope)
        scope.find_var("w").get_tensor().set(W0, place)
        feed = {"x": np.ones((4, 3), "float32") * 0.3, "label": np.ones((4, 1), "float32")}
        for _ in range(2):
            exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        results[xp.__name__] = np.asarray(scope.find_var("w").get_tensor())
    np.testing.assert_allclose(results["array_api_strict"], results["numpy"], rtol=1e-6)


def test_a_loops_gradient_op_names_every_parameter_it_produces_the_gradient_of():
    """op_role_var holds [param, grad] pairs: the collective transpiler all-reduces what it names."""
    main, startup, loss = _rnn_like(unrolled=False)
    with fluid.program_guard(main, startup):
        fluid.optimizer.SGD(0.1).minimize(loss)
    (loop_grad,) = [op for op in main.global_block().ops if op.type == "while_grad"]
    role_var = loop_grad.attrs["op_role_var"]
    assert sorted(zip(role_var[0::2], role_var[1::2])) == [("b", "b@GRAD"), ("w", "w@GRAD")]


# -- Print, random ops in loops ----------------------------------------------------------------------


def test_print_writes_paddles_tensor_format_forward_and_backward(capsys):
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [2, 2], "float32")
        x.stop_gradient = False
        shown = L.Print(x, message="The content of x:", summarize=3)
        fluid.gradients(L.reduce_sum(shown * 2.0), x)
    _run(main, startup, {"x": np.array([[1.0, 2.5], [3.0, 4.0]], "float32")}, [shown])
    out = capsys.readouterr().out
    assert (
        "Variable: x\n  - message: The content of x:\n  - lod: {}\n  - place: CPUPlace\n  - shape: [2, 2]\n"
        "  - layout: NCHW\n  - dtype: float\n  - data: [1 2.5 3]\n"
    ) in out
    assert "Variable: " + shown.name + "@GRAD\n" in out and "  - data: [2 2 2]\n" in out


def test_print_first_n_prints_that_many_runs_only(capsys):
    main, startup, guard = _programs()
    with guard:
        shown = L.Print(L.fill_constant([1], "int64", 7), first_n=2, print_phase="forward")
    exe = fluid.Executor(fluid.CPUPlace())
    for _ in range(4):
        exe.run(main, fetch_list=[shown], scope=fluid.Scope())
    assert capsys.readouterr().out.count("  - data: [7]") == 2


def test_unseeded_dropout_draws_a_new_mask_each_run_and_a_seeded_one_repeats_its_masks_per_run():
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [64], "float32")
        free = L.dropout(x, 0.5)
        i = L.fill_constant([1], "int64", 0)
        n = L.fill_constant([1], "int64", 2)
        acc = L.fill_constant([64], "float32", 0.0)
        # acc = 2 * mask_0 + mask_1: 1s and 2s appear only if the two iterations' masks differ
        _, acc = L.while_loop(
            lambda i, acc: L.less_than(i, n), lambda i, acc: [i + 1, acc * 2.0 + L.dropout(x, 0.5, seed=5)], [i, acc]
        )
    feed = {"x": np.ones(64, "float32")}
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    first = exe.run(main, feed=feed, fetch_list=[free, acc], scope=scope)
    second = exe.run(main, feed=feed, fetch_list=[free, acc], scope=scope)
    assert not np.array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert {1.0, 2.0} <= set(first[1].tolist())


# -- IfElse: branches over rows ------------------------------------------------------------------------


def test_ifelse_runs_each_branch_on_its_rows_as_paddles_docstring():
    main, startup, guard = _programs()
    with guard:
        x = L.data(name="x", shape=[4, 1], dtype="float32", append_batch_size=False)
        y = L.data(name="y", shape=[4, 1], dtype="float32", append_batch_size=False)
        ie = L.IfElse(L.greater_than(x, y))
        with ie.true_block():
            ie.output(ie.input(x) - 10)
        with ie.false_block():
            ie.output(ie.input(x) + 10)
        output = ie()
        out = L.reduce_sum(output[0])
    feed = {"x": np.array([[3], [1], [-2], [-3]], "float32"), "y": np.zeros((4, 1), "float32")}
    merged, total = _run(main, startup, feed, [output[0], out])
    np.testing.assert_allclose(merged, [[-7.0], [-9.0], [8.0], [7.0]])
    np.testing.assert_allclose(total, [-1.0])


def test_ifelse_gradient_reaches_each_rows_branch_parameters():
    """rows with a positive first feature go through 2*x, the others through x*x: d sum / dx per row."""
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [-1, 3], "float32")
        x.stop_gradient = False
        first = x[:, 0:1]
        ie = L.IfElse(L.greater_than(first, L.fill_constant([1], "float32", 0.0)))
        with ie.true_block():
            ie.output(ie.input(x) * 2.0)
        with ie.false_block():
            part = ie.input(x)
            ie.output(part * part)
        (merged,) = ie()
        (grad,) = fluid.gradients(L.reduce_sum(merged), x)
    x0 = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0], [0.3, -0.2, 0.1], [-0.4, 1.5, -2.0]], "float32")
    value, got = _run(main, startup, {"x": x0}, [merged, grad])
    positive = x0[:, :1] > 0
    np.testing.assert_allclose(value, np.where(positive, 2 * x0, x0 * x0), rtol=1e-6)
    np.testing.assert_allclose(got, np.where(positive, 2.0, 2 * x0), rtol=1e-6)


def test_ifelse_with_every_row_in_one_branch_leaves_the_other_empty():
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [-1, 2], "float32")
        ie = L.IfElse(L.greater_than(x[:, 0:1], L.fill_constant([1], "float32", 0.0)))
        with ie.true_block():
            ie.output(L.fc(ie.input(x), 3, param_attr=fluid.ParamAttr(name="w_true")))
        with ie.false_block():
            ie.output(L.fc(ie.input(x), 3, param_attr=fluid.ParamAttr(name="w_false")))
        (merged,) = ie()
    (value,) = _run(main, startup, {"x": np.ones((3, 2), "float32")}, [merged])
    assert value.shape == (3, 3)


def test_a_tensor_array_fetches_as_a_list_and_sums_element_by_element():
    main, startup, guard = _programs()
    with guard:
        a = L.array_write(L.fill_constant([2], "float32", 1.0), L.fill_constant([1], "int64", 0))
        L.array_write(L.fill_constant([2], "float32", 2.0), L.fill_constant([1], "int64", 1), array=a)
        b = L.array_write(L.fill_constant([2], "float32", 10.0), L.fill_constant([1], "int64", 0))
        both = L.sums([a, b])
    got, total = _run(main, startup, {}, [a, both])
    assert isinstance(got, list) and [g.tolist() for g in got] == [[1.0, 1.0], [2.0, 2.0]]
    assert [t.tolist() for t in total] == [[11.0, 11.0], [2.0, 2.0]]
    assert main.global_block().var(both.name).type == "lod_tensor_array"


def test_verify_refuses_a_static_rnn_step_writing_an_outer_variable_it_does_not_declare():
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [3, 2, 4], "float32")
        h_boot = fluid.data("h_boot", [2, 4], "float32")
        other = L.fill_constant([2, 4], "float32", 0.0)
        rnn = L.StaticRNN()
        with rnn.step():
            h_pre = rnn.memory(init=h_boot)
            h = L.elementwise_add(rnn.step_input(x), h_pre)
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        rnn()
    verify(main, feed_names=["x", "h_boot"])
    step = next(op for op in main.global_block().ops if op.type == "recurrent")
    main.block(step.attrs["sub_block"]).append_op("assign", {"X": [h_boot]}, {"Out": [other]})
    with pytest.raises(VerifyError, match=f"writes '{other.name}' of an outer block, which the op does not list"):
        verify(main, feed_names=["x", "h_boot"])


@pytest.mark.parametrize("step, scale", [(3.0, 2.0), (12.0, 3.0), (30.0, 5.0)])
def test_switch_gradient_follows_the_case_that_ran(step, scale):
    """y = scale * x, the scale picked by a Switch writing into y: d sum(y) / dx is that scale."""
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [3], "float32")
        x.stop_gradient = False
        counter = L.fill_constant([1], "float32", step)
        y = L.fill_constant([3], "float32", 0.0)
        with L.Switch() as switch:
            with switch.case(L.less_than(counter, L.fill_constant([1], "float32", 10.0))):
                L.assign(x * 2.0, y)
            with switch.case(L.less_than(counter, L.fill_constant([1], "float32", 20.0))):
                L.assign(x * 3.0, y)
            with switch.default():
                L.assign(x * 5.0, y)
        (grad,) = fluid.gradients(L.reduce_sum(y), x)
    value, got = _run(main, startup, {"x": np.array([1.0, -2.0, 0.5], "float32")}, [y, grad])
    np.testing.assert_allclose(value, scale * np.array([1.0, -2.0, 0.5]), rtol=1e-6)
    np.testing.assert_allclose(got, [scale] * 3, rtol=1e-6)


def test_case_and_switch_case_gradients_follow_the_branch_taken():
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [2], "float32")
        x.stop_gradient = False
        small = L.less_than(L.reduce_sum(x), L.fill_constant([1], "float32", 0.0))
        by_pred = L.case([(small, lambda: x * x)], default=lambda: x * 4.0)
        index = L.fill_constant([1], "int64", 1)
        by_index = L.switch_case(index, {0: lambda: x * 7.0, 1: lambda: L.exp(x)})
        grads = fluid.gradients(L.reduce_sum(by_pred) + L.reduce_sum(by_index), x)
    x0 = np.array([0.3, 0.4], "float32")  # sum > 0: case takes the default
    (got,) = _run(main, startup, {"x": x0}, grads)
    np.testing.assert_allclose(got, 4.0 + np.exp(x0), rtol=1e-5)


@pytest.mark.parametrize("runs, scale", [(False, 3.0), (True, 5.0)], ids=["no_iteration", "one_iteration"])
def test_a_loop_passes_on_the_gradient_of_what_it_overwrites_only_if_it_ran(runs, scale):
    """y = 3x before a loop whose body sets y = 5x once: d sum(y) / dx is 3 if the loop never ran."""
    main, startup, guard = _programs()
    with guard:
        x = fluid.data("x", [2], "float32")
        x.stop_gradient = False
        y = L.assign(x * 3.0)
        i = L.fill_constant([1], "int64", 0 if runs else 1)
        one = L.fill_constant([1], "int64", 1)
        cond = L.less_than(i, one)
        loop = L.While(cond)
        with loop.block():
            L.assign(x * 5.0, y)
            L.increment(i, in_place=True)
            L.less_than(i, one, cond=cond)
        (grad,) = fluid.gradients(L.reduce_sum(y), x)
    value, got = _run(main, startup, {"x": np.array([1.0, 2.0], "float32")}, [y, grad])
    np.testing.assert_allclose(value, [scale, 2 * scale])
    np.testing.assert_allclose(got, [scale, scale])
