"""Linear-chain CRF layer functions (`fluid.layers`): the CRF cost with its transition parameter,
Viterbi decoding with that parameter, and the chunk precision, recall and F1 of tagged sequences."""

from __future__ import annotations

from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from ..param_attr import ParamAttr
from .helper import LayerHelper


def linear_chain_crf(
    input: Variable, label: Variable, param_attr: ParamAttr | None = None, length: Variable | None = None
) -> Variable:
    """The CRF cost of each sequence, -log p(label | input), shape [sequences, 1] (Paddle names the
    output LogLikelihood but it holds the negative, the cost to minimise). `input` holds unscaled
    emission scores, [N, D] over LoD sequences or [B, S, D] padded with `length`; the transition
    parameter [D + 2, D] (start, end, then tag-to-tag weights) is made from `param_attr`, whose name
    crf_decoding reads it by."""
    helper = LayerHelper("linear_chain_crf", inputs=[input, label])
    size = input.shape[2] if length is not None else input.shape[1]
    transition = helper.create_parameter(param_attr, [size + 2, size], input.dtype)
    outputs = {
        slot: [helper.create_variable_for_type_inference(input.dtype)]
        for slot in ("Alpha", "EmissionExps", "TransitionExps", "LogLikelihood")
    }
    inputs = {"Emission": [input], "Transition": [transition], "Label": [label]}
    if length is not None:
        inputs["Length"] = [length]
    helper.append_op("linear_chain_crf", inputs, outputs)
    return outputs["LogLikelihood"][0]


def _transition(helper: LayerHelper, param_attr) -> Variable:
    """The transition parameter that linear_chain_crf made under `param_attr`'s name (in a program);
    a Variable or eager Tensor given instead is that parameter itself (eager mode has no program to
    look the name up in)."""
    if isinstance(param_attr, Variable):
        return param_attr
    name = getattr(ParamAttr._to_attr(param_attr), "name", None)
    if helper.eager or name is None:
        raise FleetgraphError(
            f"crf_decoding: param_attr {param_attr!r}; expected the ParamAttr (with its name) given to "
            "linear_chain_crf, or in eager mode the transition parameter itself"
        )
    block = helper.main_program.global_block()
    if not block.has_var(name):
        raise FleetgraphError(f"crf_decoding: no parameter {name!r}; expected linear_chain_crf's, made first")
    return block.var(name)


def crf_decoding(
    input: Variable, param_attr, label: Variable | None = None, length: Variable | None = None
) -> Variable:
    """The Viterbi path of each sequence under linear_chain_crf's transition parameter (named by
    `param_attr`): int64 tags, [N, 1] over LoD sequences or [B, S] padded with `length` (0 past each
    end). With `label`, 1 where the decoded tag equals the label and 0 elsewhere, chunk_eval's input."""
    helper = LayerHelper("crf_decoding", inputs=input)
    path = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    inputs = {"Emission": [input], "Transition": [_transition(helper, param_attr)]}
    if label is not None:
        inputs["Label"] = [label]
    if length is not None:
        inputs["Length"] = [length]
    helper.append_op("crf_decoding", inputs, {"ViterbiPath": [path]})
    return path


def chunk_eval(
    input: Variable,
    label: Variable,
    chunk_scheme: str,
    num_chunk_types: int,
    excluded_chunk_types: list[int] | None = None,
    seq_length: Variable | None = None,
) -> tuple[Variable, ...]:
    """(precision, recall, F1, inferred chunks, label chunks, correct chunks) of the tag ids `input`
    against `label` (LoD sequences, or padded with `seq_length`); ids are chunk type * tags + tag
    under `chunk_scheme` ('IOB', 'IOE', 'IOBES' or 'plain'), num_chunk_types * tags meaning outside
    any chunk. Chunks of `excluded_chunk_types` are not counted."""
    helper = LayerHelper("chunk_eval", inputs=[input, label])
    slots = ("Precision", "Recall", "F1-Score", "NumInferChunks", "NumLabelChunks", "NumCorrectChunks")
    dtypes = ("float32",) * 3 + ("int64",) * 3
    outputs = {s: [helper.create_variable_for_type_inference(d, stop_gradient=True)] for s, d in zip(slots, dtypes)}
    inputs = {"Inference": [input], "Label": [label]}
    if seq_length is not None:
        inputs["SeqLength"] = [seq_length]
    attrs = {
        "num_chunk_types": int(num_chunk_types),
        "chunk_scheme": chunk_scheme,
        "excluded_chunk_types": list(excluded_chunk_types or []),
    }
    helper.append_op("chunk_eval", inputs, outputs, attrs)
    return tuple(outputs[s][0] for s in slots)
