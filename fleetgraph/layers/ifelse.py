"""Paddle 1.x's row-wise branches: `IfElse` runs a true and a false block on the rows its [N, 1]
bool condition splits (`split_lod_tensor`) and merges their outputs back in row order
(`merge_lod_tensor`). Each branch is a conditional_block that runs whenever the condition has
rows; a branch may see none."""

from __future__ import annotations

from ..ir import unique_name
from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from .control_flow import ConditionalBlock
from .helper import LayerHelper
from .tensor import assign


def split_lod_tensor(input, mask, level=0):
    """(rows or level-`level` sequences of `input` where mask holds, the others)."""
    helper = LayerHelper("split_lod_tensor", inputs=input)
    out_true = helper.create_variable_for_type_inference(input.dtype)
    out_false = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "split_lod_tensor",
        {"X": [input], "Mask": [mask]},
        {"OutTrue": [out_true], "OutFalse": [out_false]},
        {"level": int(level)},
    )
    return out_true, out_false


def merge_lod_tensor(in_true, in_false, x, mask, level=0):
    """The rows of in_true and in_false back in the order of `x`'s rows (or sequences) under mask."""
    helper = LayerHelper("merge_lod_tensor", inputs=in_true)
    out = helper.create_variable_for_type_inference(in_true.dtype)
    helper.append_op(
        "merge_lod_tensor",
        {"X": [x], "Mask": [mask], "InTrue": [in_true], "InFalse": [in_false]},
        {"Out": [out]},
        {"level": int(level)},
    )
    return out


class IfElse:
    """`ie = IfElse(cond)`; `with ie.true_block(): y = f(ie.input(x)); ie.output(y)`, the same for
    false_block; `ie()` is the list of merged outputs."""

    OUTSIDE, IN_TRUE, IN_FALSE = 0, 1, 2

    def __init__(self, cond, name=None) -> None:
        if not isinstance(cond, Variable):
            raise TypeError(f"IfElse: cond must be a Variable, got {type(cond).__name__}")
        if cond.dtype != "bool" or len(cond.shape) != 2 or cond.shape[1] != 1:
            raise TypeError(f"IfElse: cond must be a bool [N, 1] variable, got {cond.dtype} {list(cond.shape)}")
        self.helper = LayerHelper("ifelse", name)
        self.cond = cond
        self.status = IfElse.OUTSIDE
        self.inputs: dict[int, tuple[Variable, Variable]] = {}
        self.outputs: tuple[list, list] = ([], [])  # (false outputs, true outputs)

    def _parent(self):
        program = self.helper.main_program
        return program.block(program.current_block().parent_idx)

    def input(self, x):
        """x's rows of this branch (split once per x, before both branches)."""
        if self.status == IfElse.OUTSIDE:
            raise ValueError("IfElse.input must be called inside true_block or false_block")
        if id(x) not in self.inputs:
            parent = self._parent()
            parts = [
                parent.create_var(
                    unique_name.generate_with_ignorable_key("ifelse_input" + self.helper.name), dtype=x.dtype
                )
                for _ in range(2)
            ]
            parent.append_op(
                "split_lod_tensor",
                {"X": [x], "Mask": [self.cond]},
                {"OutTrue": [parts[0]], "OutFalse": [parts[1]]},
                {"level": 0},
            )
            self.inputs[id(x)] = (parts[0], parts[1])
        out_true, out_false = self.inputs[id(x)]
        return out_true if self.status == IfElse.IN_TRUE else out_false

    def output(self, *outs) -> None:
        if self.status == IfElse.OUTSIDE:
            raise ValueError("IfElse.output can only be invoked in the sub-block")
        table = self.outputs[1 if self.status == IfElse.IN_TRUE else 0]
        parent = self._parent()
        for each in outs:
            if not isinstance(each, Variable):
                raise TypeError(f"IfElse.output: expected Variables, got {type(each).__name__}")
            outside = parent.create_var(
                unique_name.generate_with_ignorable_key(self.helper.name + "_output"), dtype=each.dtype
            )
            table.append(outside)
            assign(each, outside)

    def true_block(self):
        return _Branch(self, True)

    def false_block(self):
        return _Branch(self, False)

    def __call__(self) -> list:
        if self.status != IfElse.OUTSIDE:
            raise ValueError("IfElse() must be called outside its blocks")
        false_outs, true_outs = self.outputs
        if not false_outs and not true_outs:
            raise ValueError("Must invoke true_block/false_block before __call__")
        if false_outs and true_outs and len(false_outs) != len(true_outs):
            raise ValueError("The output side must be same")
        if not false_outs or not true_outs:
            return false_outs or true_outs
        return [merge_lod_tensor(t, f, self.cond, self.cond) for f, t in zip(false_outs, true_outs)]


class _Branch:
    def __init__(self, ifelse: IfElse, is_true: bool) -> None:
        if ifelse.status != IfElse.OUTSIDE:
            raise FleetgraphError("IfElse: a branch cannot be opened inside another")
        self.ifelse, self.is_true = ifelse, is_true
        self.guard = ConditionalBlock([ifelse.cond]).block()

    def __enter__(self):
        self.ifelse.status = IfElse.IN_TRUE if self.is_true else IfElse.IN_FALSE
        return self.guard.__enter__()

    def __exit__(self, exc_type, exc, tb) -> bool:
        outputs = self.ifelse.outputs[1 if self.is_true else 0]
        if exc_type is None and not outputs:
            self.guard.__exit__(ValueError, None, None)  # leave the block without completing it
            self.ifelse.status = IfElse.OUTSIDE
            raise ValueError("Must set output inside block")
        self.ifelse.status = IfElse.OUTSIDE
        return self.guard.__exit__(exc_type, exc, tb)
