"""Write the PaddlePaddle goldens in this directory from PaddlePaddle itself.

Run it with PaddlePaddle 3.3.1 installed in a throwaway virtual environment (never a dependency of
fleetgraph): `python tests/golden/paddle/generate.py [OUTDIR]`. It builds the same models as
tests/models.py in Paddle's own API, transpiles them with Paddle's DistributeTranspiler (the legacy
IR, FLAGS_enable_pir_api=0) and writes every role's op types and trainer 0's var mappings in the
layout of tests/ps_helpers.py's paddle_reference_dump.

A CPU build of Paddle 3.3.1 no longer registers the parameter-server ops (send, recv,
listen_and_serv, ...), so stand-in OpProtos are registered for them: their slots and attributes are
taken from the call that creates them. Nothing runs; only the programs are built.
"""

from __future__ import annotations

import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"

import paddle  # noqa: E402
from paddle.base import framework  # noqa: E402
from paddle.base.proto import framework_pb2  # noqa: E402
from paddle.distributed.transpiler import DistributeTranspiler, DistributeTranspilerConfig  # noqa: E402

paddle.enable_static()

TWO_PSERVERS = "127.0.0.1:6174,127.0.0.1:6175"
THREE_PSERVERS = "127.0.0.1:6174,127.0.0.1:6175,127.0.0.1:6176"

# -- stand-in protos for the ops a CPU build lacks ------------------------------------------------
_AT = framework_pb2.AttrType
_STUBBED: set[str] = set()
_operator_init = framework.Operator.__init__


def _attr_type(value):
    if isinstance(value, (list, tuple)):
        if not value:
            return _AT.INTS
        kind = _attr_type(value[0])
        if kind == _AT.BLOCK:
            return _AT.BLOCKS
        if kind in (_AT.INT, _AT.LONG) and any(abs(v) > 2**31 - 1 for v in value):
            return _AT.LONGS
        return {_AT.BOOLEAN: _AT.BOOLEANS, _AT.INT: _AT.INTS, _AT.LONG: _AT.LONGS, _AT.FLOAT: _AT.FLOATS}.get(
            kind, _AT.STRINGS
        )
    if isinstance(value, bool):
        return _AT.BOOLEAN
    if isinstance(value, int):
        return _AT.LONG if abs(value) > 2**31 - 1 else _AT.INT
    if isinstance(value, float):
        return _AT.FLOAT
    if isinstance(value, framework.Block):
        return _AT.BLOCK
    if hasattr(value, "__int__"):  # OpRole and other pybind enums
        return _AT.INT
    return _AT.STRING


def _stub_proto(type, inputs, outputs, attrs):
    proto = framework_pb2.OpProto()
    proto.type, proto.comment = type, "stand-in for golden generation"
    for slots, names in ((proto.inputs, inputs or {}), (proto.outputs, outputs or {})):
        for name in names:
            slot = slots.add()
            slot.name, slot.comment, slot.duplicable, slot.dispensable = name, "", True, True
    for name, value in (attrs or {}).items():
        attr = proto.attrs.add()
        attr.name, attr.type, attr.comment = name, _attr_type(value), ""
    return proto


def _operator_init_with_stubs(self, block, desc, type=None, inputs=None, outputs=None, attrs=None):
    holder = framework.OpProtoHolder.instance()
    if type is not None and (type in _STUBBED or not holder.has_op_proto(type)):
        _STUBBED.add(type)
        holder.op_proto_map[type] = _stub_proto(type, inputs, outputs, attrs)
        framework.Operator.OP_WITHOUT_KERNEL_SET.add(type)  # no shape or var-type inference
    try:
        _operator_init(self, block, desc, type, inputs, outputs, attrs)
    except RuntimeError as e:  # check_attrs, the last step, needs a C++ OpInfo a stand-in lacks
        if type not in _STUBBED or "is not registered" not in str(e):
            raise


framework.Operator.__init__ = _operator_init_with_stubs


# -- the models of tests/models.py, in Paddle's API -------------------------------------------------
def _drop_empty_inputs(program):
    """3.3.1's optimizer ops carry empty optional slots (MasterParam) its old transpiler indexes."""
    for op in program.global_block().ops:
        for slot in op.input_names:
            if not op.input(slot):
                op.desc.remove_input(slot)


def fit_a_line_2x(optimizer=None, seed=7):
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = seed
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        pred = paddle.static.nn.fc(x, size=1)
        loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
        (optimizer or paddle.optimizer.SGD(learning_rate=0.001)).minimize(loss)
    _drop_empty_inputs(main)
    return main, startup


def sliced_mlp(optimizer=lambda: paddle.optimizer.SGD(0.01), hidden=(64,), classes=10, seed=3):
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = seed
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        h = image
        for size in hidden:
            h = paddle.static.nn.fc(h, size=size, activation="relu")
        logits = paddle.static.nn.fc(h, size=classes)
        loss = paddle.nn.functional.cross_entropy(logits, label)
        paddle.metric.accuracy(input=logits, label=label, k=1)
        optimizer().minimize(loss)
    _drop_empty_inputs(main)
    return main, startup


# -- the dump: tests/ps_helpers.py's paddle_reference_dump layout -------------------------------------
def _ops(program):
    return "\n".join(f"block{b.idx}: " + " ".join(op.type for op in b.ops) for b in program.blocks)


def _transpile(build, trainer_id, pservers, trainers, sync_mode, **cfg):
    config = DistributeTranspilerConfig()
    if cfg.get("runtime_split_send_recv"):
        config.sync_mode = False  # Paddle's config refuses runtime_split_send_recv in sync mode
    for key, value in cfg.items():
        setattr(config, key, value)
    main, startup = build()
    t = DistributeTranspiler(config)
    t.transpile(
        trainer_id, program=main, pservers=pservers, trainers=trainers, sync_mode=sync_mode, startup_program=startup
    )
    return t


def dump(build, label, pservers=TWO_PSERVERS, trainers=2, sync_mode=True, **cfg):
    def shaped(vs):
        return [f"{v.name}{list(v.shape)}" for v in vs]

    main, startup = build()
    lines = [f"==== {label} (pservers={pservers}, trainers={trainers}, config={{}}) ====", "origin main:"]
    lines += [_ops(main), "origin startup:", _ops(startup)]
    for trainer_id in range(trainers):
        t = _transpile(build, trainer_id, pservers, trainers, sync_mode, **cfg)
        lines += [f"trainer{trainer_id} main:", _ops(t.get_trainer_program(wait_port=False))]
        lines += [f"trainer{trainer_id} startup:", _ops(t.startup_program)]
        if trainer_id == 0:
            eps = {ep: {k: [v.name for v in vs] for k, vs in d.items()} for ep, d in t.param_grad_ep_mapping.items()}
            lines += [
                f"param_var_mapping: { {k: shaped(vs) for k, vs in t.param_var_mapping.items()} }",
                f"grad_var_mapping: { {k: shaped(vs) for k, vs in t.grad_var_mapping.items()} }",
                f"param_grad_ep_mapping: {eps}",
            ]
    t = _transpile(build, 0, pservers, trainers, sync_mode, **cfg)  # as a pserver does: no trainer program
    for ep in pservers.split(","):
        server_main, server_startup = t.get_pserver_programs(ep)
        lines += [f"pserver {ep} main:", _ops(server_main), f"pserver {ep} startup:", _ops(server_startup)]
    return "\n".join(lines) + "\n"


GOLDENS = {
    "fit_a_line_sync": lambda: dump(fit_a_line_2x, "fit_a_line sync"),
    "fit_a_line_async": lambda: dump(fit_a_line_2x, "fit_a_line async", sync_mode=False),
    "mlp_sliced_sync": lambda: dump(sliced_mlp, "mlp sliced sync"),
    "mlp_sliced_adam": lambda: dump(lambda: sliced_mlp(lambda: paddle.optimizer.Adam(0.01)), "mlp sliced adam"),
    "mlp_sliced_momentum_3ps": lambda: dump(
        lambda: sliced_mlp(lambda: paddle.optimizer.Momentum(0.01)), "mlp sliced momentum", pservers=THREE_PSERVERS
    ),
    "mlp_unsliced": lambda: dump(sliced_mlp, "mlp unsliced", slice_var_up=False),
    "mlp_one_pserver": lambda: dump(sliced_mlp, "mlp one pserver", pservers="127.0.0.1:6174"),
    "mlp_sliced_runtime_split": lambda: dump(
        sliced_mlp, "mlp sliced runtime_split", sync_mode=False, runtime_split_send_recv=True
    ),
}
# Not here: HashName (3.3.1's HashName.dispatch calls var.name(), a string, and fails), half-async and
# GEO (3.3.1's transpiler builds them with the ops of its later communicator), and Fluid-spelled
# models (3.3.1 has no fluid.layers); those stay in tests/golden/snapshots.

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, make in GOLDENS.items():
        with open(os.path.join(out, name + ".txt"), "w") as f:
            f.write(make())
        print("wrote", name)
