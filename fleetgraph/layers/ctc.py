"""Layer functions over the ops of ops/ctc.py: warpctc, ctc_greedy_decoder and edit_distance
(Paddle 1.8's fluid.layers spellings and outputs)."""

from __future__ import annotations

from .helper import LayerHelper
from .nn import topk
from .sampled import _check
from .sequence_edit import sequence_erase
from .tensor_shape import squeeze


def warpctc(input, label, blank=0, norm_by_times=False, input_length=None, label_length=None):
    """The CTC loss [batch, 1] of unnormalized logits: LoD `input` [total_time, classes] and `label`
    [total_labels, 1], or padded `input` [max_time, batch, classes] and `label` [batch, max_labels]
    with `input_length` and `label_length`. `norm_by_times` divides each sequence's gradient by
    its steps (the loss itself is not divided), as Paddle."""
    _check("warpctc", "input", input, ("float32",))
    _check("warpctc", "label", label, ("int32",))
    inputs = {"Logits": [input], "Label": [label]}
    if input_length is not None and label_length is not None:
        _check("warpctc", "LogitsLength", input_length, ("int64",))
        _check("warpctc", "LabelLength", label_length, ("int64",))
        inputs.update(LogitsLength=[input_length], LabelLength=[label_length])
    helper = LayerHelper("warpctc", inputs=[input, label])
    loss = helper.create_variable_for_type_inference(input.dtype)
    grad = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    helper.append_op(
        "warpctc",
        inputs,
        {"WarpCTCGrad": [grad], "Loss": [loss]},
        {"blank": int(blank), "norm_by_times": bool(norm_by_times)},
    )
    return loss


def ctc_greedy_decoder(input, blank, input_length=None, padding_value=0, name=None):
    """Best path decoding: the top class per step (topk), then ctc_align merges repeats and drops
    blanks. LoD input gives a LoD int64 result; a padded [batch, time, classes] input with
    `input_length` gives (result padded with `padding_value`, its lengths)."""
    helper = LayerHelper("ctc_greedy_decoder", name, inputs=input)
    _, indices = topk(input, k=1)
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    if input_length is None:
        helper.append_op(
            "ctc_align", {"Input": [indices]}, {"Output": [out]}, {"merge_repeated": True, "blank": int(blank)}
        )
        return out
    lengths = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "ctc_align",
        {"Input": [squeeze(indices, [2])], "InputLength": [input_length]},
        {"Output": [out], "OutputLength": [lengths]},
        {"merge_repeated": True, "blank": int(blank), "padding_value": int(padding_value)},
    )
    return out, lengths


def edit_distance(input, label, normalized=True, ignored_tokens=None, input_length=None, label_length=None):
    """Levenshtein distances [batch, 1] float32 of int64 token sequences (LoD, or padded with
    lengths), divided by the reference's length when `normalized`, after `ignored_tokens` are erased
    from both; returns (distances, sequence count [1])."""
    _check("edit_distance", "input", input, ("int64",))
    _check("edit_distance", "label", label, ("int64",))
    if ignored_tokens:
        input, label = sequence_erase(input, ignored_tokens), sequence_erase(label, ignored_tokens)
    inputs = {"Hyps": [input], "Refs": [label]}
    if input_length is not None and label_length is not None:
        inputs.update(HypsLength=[input_length], RefsLength=[label_length])
    helper = LayerHelper("edit_distance", inputs=[input, label])
    out = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    count = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("edit_distance", inputs, {"Out": [out], "SequenceNum": [count]}, {"normalized": bool(normalized)})
    return out, count


__all__ = ["ctc_greedy_decoder", "edit_distance", "warpctc"]
