"""`fluid.layers.DynamicRNN` (Paddle 1.x): a step block over sequences of different lengths, built
as Paddle builds it from a `while` loop and tensor arrays.

step_input ranks the batch's sequences by length (lod_rank_table) and splits them into time steps
(lod_tensor_to_array): step t holds the t-th row of every sequence longer than t, longest first.
A memory lives in an array whose element t is its value at step t, shrunk to the sequences still
running (shrink_memory); static_input is reordered by rank and shrunk the same way; each output's
steps are written into an array and joined back into sequences in the batch's order
(array_to_lod_tensor). Gradients are while's, through the arrays' ops.
"""

from __future__ import annotations

from contextlib import contextmanager

from ..ir.program import Variable
from .control_flow import While
from .helper import LayerHelper
from .math import less_than
from .static_rnn import in_block
from .tensor import fill_constant, fill_constant_batch_size_like, increment
from .tensor_array import (
    array_read,
    array_to_lod_tensor,
    array_write,
    create_array,
    lod_rank_table,
    lod_tensor_to_array,
    max_sequence_len,
    reorder_lod_tensor_by_rank,
    shrink_memory,
)


def _check_variable(value, what: str) -> None:
    if not isinstance(value, Variable):
        raise TypeError(f"{what} must be a Variable, got {type(value).__name__}")


class DynamicRNN:
    """Paddle 1.x's DynamicRNN: `with rnn.block(): ...` builds the step; `rnn()` its outputs as LoD
    tensors in the batch's order."""

    BEFORE_RNN, IN_RNN, AFTER_RNN = 0, 1, 2

    def __init__(self, name: str | None = None) -> None:
        self.helper = LayerHelper("dynamic_rnn", name)
        self.status = DynamicRNN.BEFORE_RNN
        self.lod_rank_table = None
        self.max_seq_len = None
        self.step_idx = None
        self.zero_idx = None
        self.mem_dict: dict[str, Variable] = {}  # a memory's step variable -> its array
        self.output_array: list[Variable] = []
        self.outputs: list[Variable] = []
        self.cond = self.helper.create_variable_for_type_inference("bool", stop_gradient=True)
        self.while_op = While(self.cond)
        self.input_array: list[Variable] = []
        self.mem_link: list[tuple[Variable, Variable]] = []  # (new value, the memory's array)

    def _assert_in_rnn_block_(self, method: str) -> None:
        if self.status != DynamicRNN.IN_RNN:
            raise ValueError(f"{method} can only be invoked inside rnn block.")

    def step_input(self, x: Variable, level: int = 0) -> Variable:
        """x's rows at the current step: one per sequence (of LoD level `level`) still running,
        longest sequence first. The first call ranks the sequences; later inputs share that rank."""
        self._assert_in_rnn_block_("step_input")
        _check_variable(x, "step_input() input")
        with in_block(self._parent):
            if self.lod_rank_table is None:
                self.lod_rank_table = lod_rank_table(x, level)
                self.max_seq_len = max_sequence_len(self.lod_rank_table)
                less_than(self.step_idx, self.max_seq_len, force_cpu=True, cond=self.cond)
            array = lod_tensor_to_array(x, self.lod_rank_table)
        self.input_array.append(array)
        return array_read(array, self.step_idx)

    def static_input(self, x: Variable) -> Variable:
        """x's rows (one per sequence, in the batch's order) reordered by rank and, at each step,
        those of the sequences still running."""
        self._assert_in_rnn_block_("static_input")
        _check_variable(x, "static_input() input")
        if self.lod_rank_table is None:
            raise RuntimeError("static_input() must be called after step_input().")
        with in_block(self._parent):
            reordered = reorder_lod_tensor_by_rank(x, self.lod_rank_table)
        return shrink_memory(reordered, self.step_idx, self.lod_rank_table)

    @contextmanager
    def block(self):
        """The step block: the `with` body runs once per step of the longest sequence."""
        if self.status != DynamicRNN.BEFORE_RNN:
            raise ValueError("rnn.block() can only be invoke once")
        self.step_idx = fill_constant([1], "int64", 0, force_cpu=True)
        self._parent = self.helper.main_program.current_block()  # where the loop's preparations go
        self.status = DynamicRNN.IN_RNN
        with self.while_op.block():
            yield
            if self.lod_rank_table is None:
                raise ValueError(
                    "DynamicRNN: step_input() was never called in rnn.block(); expected one sequence input"
                )
            increment(self.step_idx, 1.0, in_place=True)
            for new_mem, mem_array in self.mem_link:
                array_write(new_mem, self.step_idx, array=mem_array)
            less_than(self.step_idx, self.max_seq_len, force_cpu=True, cond=self.cond)
        self.status = DynamicRNN.AFTER_RNN
        self.outputs = [array_to_lod_tensor(each, self.lod_rank_table) for each in self.output_array]

    def __call__(self, *args, **kwargs):
        if self.status != DynamicRNN.AFTER_RNN:
            raise ValueError("Output of the dynamic RNN can only be visited outside the rnn block.")
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs

    def memory(self, init=None, shape=None, value=0.0, need_reorder=False, dtype="float32") -> Variable:
        """A state, one row per running sequence: `init` (reordered by rank with need_reorder), or
        else `value` of `shape` per sequence; update_memory sets its next value."""
        self._assert_in_rnn_block_("memory")
        if init is None:
            if not self.input_array:
                raise ValueError("step_input should be invoked before memory(shape=..., value=...)")
            with in_block(self._parent):
                first = array_read(self.input_array[0], self._zero_idx())
                first.stop_gradient = True  # only its batch size is read
                init = fill_constant_batch_size_like(first, [-1, *shape], dtype, value)
            return self.memory(init=init)
        _check_variable(init, "The input arg `init` of memory()")
        with in_block(self._parent):
            if need_reorder:
                if self.lod_rank_table is None:
                    raise ValueError(
                        "If set need_reorder to True, make sure step_input be invoked before "
                        "memory(init=init, need_reordered=True, ...)."
                    )
                init = reorder_lod_tensor_by_rank(init, self.lod_rank_table)
            mem_array = array_write(init, self._zero_idx())
        step_value = shrink_memory(array_read(mem_array, self.step_idx), self.step_idx, self.lod_rank_table)
        self.mem_dict[step_value.name] = mem_array
        return step_value

    def update_memory(self, ex_mem: Variable, new_mem: Variable) -> None:
        """new_mem is ex_mem's value at the next step."""
        self._assert_in_rnn_block_("update_memory")
        _check_variable(ex_mem, "The input arg `ex_mem` of update_memory()")
        _check_variable(new_mem, "The input arg `new_mem` of update_memory()")
        mem_array = self.mem_dict.get(ex_mem.name)
        if mem_array is None:
            raise ValueError("Please invoke memory before update_memory")
        if self.lod_rank_table is None:
            raise ValueError("Please invoke step_input before update_memory")
        self.mem_link.append((new_mem, mem_array))

    def output(self, *outputs: Variable) -> None:
        """Collect each at every step; rnn() returns them joined into sequences."""
        self._assert_in_rnn_block_("output")
        for each in outputs:
            with in_block(self._parent):
                array = create_array(each.dtype)
            array_write(each, self.step_idx, array=array)
            self.output_array.append(array)

    def _zero_idx(self) -> Variable:
        """An int64 0 in the parent block (where the memories' arrays start)."""
        if self.zero_idx is None:
            with in_block(self._parent):
                self.zero_idx = fill_constant([1], "int64", 0, force_cpu=True)
        return self.zero_idx
