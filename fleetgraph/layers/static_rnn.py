"""`fluid.layers.StaticRNN` (Paddle 1.x): a step block run once per time step of equal-length
sequences, as the `recurrent` op (ops/recurrent_op.py).

Inside `with rnn.step():` the user's ops form the step block. `step_input(x)` names a step's slice
of x (time along dimension 0) as x itself, `memory` a state read from the step before (its initial
value at the first step), `update_memory` the state's next value, and `step_output`/`output` a
value whose steps the op stacks into a sequence of the same name in the parent block. Closing the
block appends `recurrent` to the parent with what the step block reads from outside as its
parameters.
"""

from __future__ import annotations

from contextlib import contextmanager

from ..ir import unique_name
from ..ir.errors import FleetgraphError
from ..ir.program import Block, Variable, VarType
from .control_flow import BlockGuard
from .helper import LayerHelper
from .tensor import fill_constant_batch_size_like


@contextmanager
def in_block(block: Block):
    """Layer functions called in the `with` body append their ops to `block`: a loop's or a step's
    preparations, which belong to the block that runs it."""
    program = block.program
    current = program.current_block_idx
    program.current_block_idx = block.idx
    try:
        yield
    finally:
        program.current_block_idx = current


def _check_variable(value, what: str) -> None:
    if not isinstance(value, Variable):
        raise TypeError(f"StaticRNN.{what} must be a Variable, got {type(value).__name__}")


class _MemoryLink:
    """A memory: its initial value (parent block), the variable a step reads (`pre_mem`) and the
    one update_memory names as its next value (`mem`)."""

    def __init__(self, init: Variable, pre_mem: Variable) -> None:
        self.init, self.pre_mem, self.mem = init, pre_mem, None


class StaticRNN:
    """Paddle 1.x's StaticRNN: `with rnn.step(): ...` builds the step block; `rnn()` its outputs."""

    BEFORE_RNN_BLOCK, IN_RNN_BLOCK, AFTER_RNN_BLOCK = 0, 1, 2

    def __init__(self, name: str | None = None) -> None:
        self.helper = LayerHelper("static_rnn", name)
        self.memories: dict[str, _MemoryLink] = {}  # pre_mem's name -> its link
        self.inputs: list[Variable] = []  # the step block's slices
        self.outputs: list[Variable] = []  # the parent block's stacked sequences
        self.status = StaticRNN.BEFORE_RNN_BLOCK
        self.seq_len = None

    def step(self) -> BlockGuard:
        """The step block: ops in the `with` body run once per time step."""
        rnn = self

        class _StepGuard(BlockGuard):
            def __enter__(self):
                rnn.status = StaticRNN.IN_RNN_BLOCK
                return super().__enter__()

            def complete(self) -> None:
                rnn.status = StaticRNN.AFTER_RNN_BLOCK
                rnn._complete_op()

        return _StepGuard(self.helper.main_program)

    def _assert_in_rnn_block_(self, method: str) -> None:
        if self.status != StaticRNN.IN_RNN_BLOCK:
            raise ValueError(f"You must invoke {method} in rnn block")

    def _parent_block(self):
        program = self.helper.main_program
        return program.block(program.current_block().parent_idx)

    def memory(
        self, init=None, shape=None, batch_ref=None, init_value=0.0, init_batch_dim_idx=0, ref_batch_dim_idx=1
    ) -> Variable:
        """A state: `init` at the first step, then the value update_memory gave it the step before.
        Without `init`, a constant `init_value` of `shape` whose dimension init_batch_dim_idx is
        batch_ref's dimension ref_batch_dim_idx (batch_ref a step input: its sequence's batch)."""
        self._assert_in_rnn_block_("memory")
        if init is not None:
            _check_variable(init, "memory: init")
        if init is None:
            if shape is None or batch_ref is None:
                raise ValueError("if init is None, memory at least need shape and batch_ref")
            _check_variable(batch_ref, "memory: batch_ref")
            init = self._boot(shape, batch_ref, init_value, init_batch_dim_idx, ref_batch_dim_idx)
        name = unique_name.generate_with_ignorable_key(f"{self.helper.name}@mem")
        # is_data: the recurrent op feeds it before each step, as the executor feeds a data variable
        pre_mem = self.helper.block.create_var(name, init.shape, init.dtype, is_data=True)
        self.memories[name] = _MemoryLink(init, pre_mem)
        return pre_mem

    def _boot(self, shape, batch_ref, value, init_batch_dim_idx, ref_batch_dim_idx) -> Variable:
        """The constant initial state, made in the parent block from the sequence batch_ref steps over."""
        parent = self._parent_block()
        ref = parent._find_var_recursive(batch_ref.name)
        if ref is None:
            raise FleetgraphError(
                f"StaticRNN.memory: batch_ref {batch_ref.name!r} is made inside the step block; expected a step "
                "input or a variable of the enclosing block"
            )
        with in_block(parent):
            return fill_constant_batch_size_like(
                ref, shape, ref.dtype, value, input_dim_idx=ref_batch_dim_idx, output_dim_idx=init_batch_dim_idx
            )

    def step_input(self, x: Variable) -> Variable:
        """x's slice at the current step (x's dimension 0 is time), named as x."""
        self._assert_in_rnn_block_("step_input")
        _check_variable(x, "step_input: x")
        if self.seq_len is None:
            self.seq_len = x.shape[0]
        elif x.shape[0] != -1 and self.seq_len != x.shape[0]:
            raise ValueError("Static RNN only take fix seq_len input")
        ipt = self.helper.block.create_var(x.name, tuple(x.shape[1:]), x.dtype, type=x.type)
        self.inputs.append(ipt)
        return ipt

    def step_output(self, o: Variable) -> None:
        """Collect o at every step into a sequence (time along dimension 0) that rnn() returns."""
        self._assert_in_rnn_block_("step_output")
        _check_variable(o, "step_output: o")
        tmp_o = self._helper_copy(o)
        out = self._parent_block().create_var(tmp_o.name, (self.seq_len, *tmp_o.shape), tmp_o.dtype)
        self.outputs.append(out)

    def output(self, *outputs: Variable) -> None:
        """step_output of each."""
        for each in outputs:
            self.step_output(each)

    def update_memory(self, mem: Variable, var: Variable) -> None:
        """var (made in the step) is mem's value at the next step."""
        _check_variable(mem, "update_memory: mem")
        _check_variable(var, "update_memory: var")
        if mem.name not in self.memories:
            raise ValueError(f"StaticRNN.update_memory: {mem.name!r} is not a memory of this StaticRNN")
        self.memories[mem.name].mem = var

    def __call__(self, *args, **kwargs):
        if self.status != StaticRNN.AFTER_RNN_BLOCK:
            raise ValueError("RNN output can only be retrieved after rnn block")
        if not self.outputs:
            raise ValueError("RNN has no output")
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs

    def _helper_copy(self, var: Variable) -> Variable:
        """A step-block variable holding var's value (rnn_memory_helper), so an output and a state
        made from the same value have names of their own."""
        out = self.helper.create_variable_for_type_inference(var.dtype)
        self.helper.append_op("rnn_memory_helper", {"X": [var]}, {"Out": [out]}, {"dtype": var.dtype})
        return out

    def _complete_op(self) -> None:
        """Append `recurrent` to the parent: the step inputs' sequences, the memories' initial values
        and everything else the step block reads from outside (its parameters)."""
        block, parent = self.helper.main_program.current_block(), self._parent_block()
        local = {n for op in block.ops for n in op.output_arg_names}
        local |= {x.name for x in self.inputs} | set(self.memories)
        params = []
        for op in block.ops:
            params += [n for n in op.input_arg_names if n not in local and n not in params]
        states = []
        for link in self.memories.values():
            if link.mem is None:
                raise ValueError(f"{link.init.name} should be updated in every step.")
            states.append(self._helper_copy(block.var_recursive(link.mem.name)).name)
        step_scopes = parent.create_var(
            unique_name.generate(f"{self.helper.name}.step_scopes"), type=VarType.STEP_SCOPES, stop_gradient=True
        )
        parent.append_op(
            "recurrent",
            {
                "inputs": [parent.var_recursive(x.name) for x in self.inputs],
                "initial_states": [link.init for link in self.memories.values()],
                "parameters": [parent.var_recursive(n) for n in params],
            },
            {"outputs": self.outputs, "step_scopes": [step_scopes]},
            {
                "has_states": bool(self.memories),
                "ex_states": list(self.memories),
                "states": states,
                "sub_block": block.idx,
                "is_train": True,
            },
        )
