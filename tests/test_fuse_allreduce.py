"""fuse_allreduce: gradients of a ResNet-50-shaped program grouped greedily into size-limited buckets,
each bucket reduced once through a coalesce_tensor buffer whose views are the gradients."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from fleetgraph.executor import Executor, Scope
from fleetgraph.ir import FleetgraphError, OpRole, Program, program_to_json
from fleetgraph.transpiler.collective import insert_allreduce
from fleetgraph.transpiler.fuse_allreduce import Bucket, fuse_allreduce, fuse_allreduce_with_plan, plan_buckets

MB = 1024 * 1024


def _resnet50_param_shapes() -> list[list[int]]:
    """ResNet-50's trainable parameters in creation order: conv filters, batch-norm scale and bias,
    the final fc."""
    shapes: list[list[int]] = []

    def conv_bn(out_c: int, in_c: int, k: int) -> None:
        shapes.extend([[out_c, in_c, k, k], [out_c], [out_c]])

    conv_bn(64, 3, 7)
    in_c = 64
    for mid, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
        for b in range(blocks):
            conv_bn(mid, in_c, 1)
            conv_bn(mid, mid, 3)
            conv_bn(mid * 4, mid, 1)
            if b == 0:
                conv_bn(mid * 4, in_c, 1)  # the projection shortcut
            in_c = mid * 4
    return shapes + [[2048, 1000], [1000]]


def _synthetic_program(params: list[tuple[list[int], str]]) -> Program:
    """One forward op per parameter, backward ops in reverse writing `p@GRAD` (tagged with
    op_role_var as append_backward does), then one sgd per parameter."""
    main = Program()
    block = main.global_block()
    block.create_var("learning_rate_0", [1], "float32", persistable=True)
    names = [f"param_{i}" for i in range(len(params))]
    for name, (shape, dtype) in zip(names, params):
        block.create_parameter(name, shape, dtype)
        block.create_var(name + ".out", shape, dtype)
        block.append_op("scale", {"X": [name]}, {"Out": [name + ".out"]})
    for name, (shape, dtype) in reversed(list(zip(names, params))):
        block.create_var(name + "@GRAD", shape, dtype)
        role = {"op_role": int(OpRole.Backward), "op_role_var": [name, name + "@GRAD"]}
        block.append_op("scale", {"X": [name + ".out"]}, {"Out": [name + "@GRAD"]}, {"scale": 2.0, **role})
    for name in names:
        block.append_op(
            "sgd",
            {"Param": [name], "Grad": [name + "@GRAD"], "LearningRate": ["learning_rate_0"]},
            {"ParamOut": [name]},
            {"op_role": int(OpRole.Optimize), "op_role_var": [name, name + "@GRAD"]},
        )
    return main


def _backward_order_sizes(params: list[tuple[list[int], str]]) -> list[tuple[str, int]]:
    """(grad, nbytes) in the order backward produces the gradients: last parameter first."""
    sizes = [(f"param_{i}@GRAD", int(np.prod(s)) * np.dtype(d).itemsize) for i, (s, d) in enumerate(params)]
    return sizes[::-1]


def _greedy_bucket_count(nbytes: list[int], limit: int) -> int:
    count, used = 0, None
    for n in nbytes:
        if used is None or used + n > limit:
            count, used = count + 1, n
        else:
            used += n
    return count


RESNET50 = [(shape, "float32") for shape in _resnet50_param_shapes()]


@pytest.fixture(scope="module")
def reduced_resnet50() -> Program:
    return insert_allreduce(_synthetic_program(RESNET50), nranks=8)


def _types(program: Program) -> list[str]:
    return [op.type for op in program.global_block().ops]


def test_synthetic_resnet50_has_resnet50s_parameters():
    assert len(RESNET50) == 161
    assert sum(int(np.prod(s)) for s, _ in RESNET50) == 25_557_032


@pytest.mark.parametrize("size_mb", [32, 4, 1])
def test_buckets_follow_the_greedy_size_limit(reduced_resnet50, size_mb):
    fused, buckets = fuse_allreduce_with_plan(reduced_resnet50, fuse_grad_size_in_MB=size_mb)
    sizes = _backward_order_sizes(RESNET50)
    assert len(buckets) == _greedy_bucket_count([n for _, n in sizes], size_mb * MB)
    assert [g for b in buckets for g in b.grads] == [g for g, _ in sizes]
    nbytes = dict(sizes)
    for bucket in buckets:
        assert bucket.nbytes == sum(nbytes[g] for g in bucket.grads) == bucket.numel * 4
        assert bucket.nbytes <= size_mb * MB or len(bucket.grads) == 1
    types = _types(fused)
    assert types.count("c_allreduce_sum") == len(buckets)
    assert types.count("coalesce_tensor") == sum(len(b.grads) > 1 for b in buckets)
    averages = [op.input("X") for op in fused.global_block().ops if op.type == "scale" and op.attrs["scale"] == 1 / 8]
    assert sorted(averages) == sorted([g] for g, _ in sizes)  # each gradient still averaged once


def test_a_gradient_larger_than_the_limit_gets_a_bucket_of_its_own(reduced_resnet50):
    buckets = plan_buckets(reduced_resnet50, fuse_grad_size_in_MB=4)
    fc_w = f"param_{len(RESNET50) - 2}@GRAD"  # [2048, 1000] float32: 7.8 MiB
    assert Bucket([fc_w], "float32", 2_048_000, 8_192_000, fc_w) in buckets


def test_fusion_logs_how_many_all_reduces_remain(reduced_resnet50, caplog):
    with caplog.at_level(logging.INFO, logger="fleetgraph.transpiler"):
        _, buckets = fuse_allreduce_with_plan(reduced_resnet50)
    assert f"fused 161 all_reduce ops into {len(buckets)}" in caplog.messages
    assert 1 < len(buckets) < 161


@pytest.mark.parametrize("size_mb", [0, -1])
def test_non_positive_size_disables_fusion(reduced_resnet50, size_mb):
    fused = fuse_allreduce(reduced_resnet50, fuse_grad_size_in_MB=size_mb)
    assert program_to_json(fused) == program_to_json(reduced_resnet50)
    assert _types(fused).count("c_allreduce_sum") == 161


def test_each_coalesce_comes_right_after_its_bucket_last_producer(reduced_resnet50):
    fused, buckets = fuse_allreduce_with_plan(reduced_resnet50)
    ops = fused.global_block().ops
    coalesces = [i for i, op in enumerate(ops) if op.type == "coalesce_tensor"]
    multi = [b for b in buckets if len(b.grads) > 1]
    assert len(coalesces) == len(multi)
    for i, bucket in zip(coalesces, multi):
        op = ops[i]
        assert op.input("Input") == op.output("Output") == bucket.grads
        assert op.output("FusedOutput") == [bucket.fused] and op.attrs["copy_data"] is True
        producer = ops[i - 1]
        assert producer.type == "scale" and producer.output("Out") == [bucket.grads[-1]]
        assert producer.attrs["op_role"] == OpRole.Backward
        sync, reduce = ops[i + 1 : i + 3]
        assert (sync.type, sync.input("X")) == ("c_sync_calc_stream", [bucket.fused])
        assert reduce.type == "c_allreduce_sum" and reduce.input("X") == reduce.output("Out") == [bucket.fused]
        var = fused.global_block().var(bucket.fused)
        assert (var.shape, var.dtype) == ((bucket.numel,), "float32")
    reduced = {op.input("X")[0] for op in ops if op.type == "c_allreduce_sum"}
    assert reduced == {b.fused for b in buckets}
    comm_sync = _types(fused).index("c_sync_comm_stream")  # the gradients are scaled after it, as before fusion
    assert [(op.type, op.input("X")) for op in ops[comm_sync + 1 : comm_sync + 162]] == [
        ("scale", [g]) for g, _ in _backward_order_sizes(RESNET50)
    ]


def test_fusion_is_pure_and_deterministic(reduced_resnet50):
    before = program_to_json(reduced_resnet50)
    first, second = fuse_allreduce(reduced_resnet50), fuse_allreduce(reduced_resnet50)
    assert program_to_json(reduced_resnet50) == before
    assert program_to_json(first) == program_to_json(second)


def test_different_dtypes_never_share_a_bucket():
    dtypes = ["float32", "float64", "float64", "float64", "float32", "float32", "float16"]
    program = insert_allreduce(_synthetic_program([([3, 2], d) for d in dtypes]), nranks=2)
    fused, buckets = fuse_allreduce_with_plan(program)
    assert [(b.dtype, b.grads) for b in buckets] == [
        ("float16", ["param_6@GRAD"]),
        ("float32", ["param_5@GRAD", "param_4@GRAD"]),
        ("float64", ["param_3@GRAD", "param_2@GRAD", "param_1@GRAD"]),
        ("float32", ["param_0@GRAD"]),
    ]
    assert [b.nbytes for b in buckets] == [12, 48, 144, 24]
    assert [fused.global_block().var(b.fused).dtype for b in buckets] == [b.dtype for b in buckets]


def test_an_op_reading_a_reduced_gradient_closes_the_bucket():
    program = insert_allreduce(_synthetic_program([([4], "float32")] * 3), nranks=2)
    block = program.global_block()
    after_first_reduce = next(i for i, op in enumerate(block.ops) if op.type == "c_allreduce_sum") + 1
    block.create_var("peek", [4], "float32")
    block._insert_op(
        after_first_reduce, "scale", {"X": ["param_2@GRAD"]}, {"Out": ["peek"]}, {"op_role": int(OpRole.Backward)}
    )
    # fusing param_2 with the later gradients would move its all-reduce past the op reading it
    assert [b.grads for b in plan_buckets(program)] == [["param_2@GRAD"], ["param_1@GRAD", "param_0@GRAD"]]


def test_a_gradient_of_unknown_shape_is_rejected():
    program = insert_allreduce(_synthetic_program([([-1, 3], "float32"), ([3], "float32")]), nranks=2)
    with pytest.raises(FleetgraphError, match=r"gradient 'param_0@GRAD' has shape \[-1, 3\]; expected a fully known"):
        fuse_allreduce(program)


def test_fusing_a_fused_program_again_is_rejected(reduced_resnet50):
    with pytest.raises(FleetgraphError, match="expected a program not fused yet"):
        fuse_allreduce(fuse_allreduce(reduced_resnet50))


def test_coalesce_outputs_are_views_of_the_fused_buffer():
    program = Program()
    block = program.global_block()
    values = {"a": np.arange(6, dtype="float32").reshape(2, 3), "b": np.array([7.0, 8.0, 9.0, 10.0], "float32")}
    for name, value in values.items():
        block.create_var(name, value.shape, "float32", persistable=True)
    block.create_var("fused", [10], "float32", persistable=True)
    block.append_op("coalesce_tensor", {"Input": ["a", "b"]}, {"Output": ["a", "b"], "FusedOutput": ["fused"]})
    scope = Scope()
    scope.vars.update({name: value.copy() for name, value in values.items()})
    Executor().run(program, fetch_list=[], scope=scope)
    buffer = scope.vars["fused"]
    np.testing.assert_array_equal(buffer, np.arange(11, dtype="float32")[[0, 1, 2, 3, 4, 5, 7, 8, 9, 10]])
    for name, value in values.items():
        assert np.shares_memory(scope.vars[name], buffer)
        np.testing.assert_array_equal(scope.vars[name], value)
    buffer *= 2  # what an in-place all-reduce of the buffer does: every view sees it
    np.testing.assert_array_equal(scope.vars["b"], 2 * values["b"])


def test_coalesce_rejects_inputs_of_another_dtype():
    program = Program()
    block = program.global_block()
    block.create_var("a", [2], "float32", is_data=True)
    block.create_var("b", [2], "float64", is_data=True)
    block.create_var("fused", [4], "float32")
    with pytest.raises(FleetgraphError, match=r"input 'b' has dtype float64; expected dtype float32"):
        block.append_op("coalesce_tensor", {"Input": ["a", "b"]}, {"Output": ["a", "b"], "FusedOutput": ["fused"]})
