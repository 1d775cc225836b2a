"""The callback append_backward always runs after each gradient op: a variable's `error_clip`
(fluid.clip.ErrorClipByValue) bounds the gradient flowing back through it, as Paddle's
`error_clip_callback`."""

from __future__ import annotations

from ..ir.program import Block


def error_clip_callback(block: Block, context: dict[str, str]) -> None:
    """After a gradient op: clip each gradient it wrote whose forward variable has an `error_clip`
    (fluid.clip.ErrorClipByValue) into [min, max], in place, as Paddle's `error_clip_callback`."""
    op = block.ops[-1]
    for grad in [n for n in op.output_arg_names if n in context]:
        fwd = block._find_var_recursive(context[grad])
        clip = getattr(fwd, "error_clip", None)
        if clip is not None:
            block.append_op("clip", {"X": [grad]}, {"Out": [grad]}, {"min": clip.min, "max": clip.max})
