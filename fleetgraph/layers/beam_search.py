"""Beam search layer functions in Paddle 1.8.5's signatures: `fluid.layers.beam_search` (one
decoding step over 2-level LoD beams), `beam_search_decode` (the sentences traced back through the
steps' tensor arrays) and `gather_tree` (the same over padded [time, batch, beam] ids)."""

from __future__ import annotations

from ..ir.program import Variable
from .helper import LayerHelper


def _check(value, name: str, where: str, dtypes: tuple[str, ...]) -> None:
    """Paddle's check_variable_and_dtype: a TypeError naming what was expected."""
    if not isinstance(value, Variable):
        raise TypeError(f"{where}: {name} must be a Variable, got {type(value).__name__}")
    if value.dtype not in dtypes:
        raise TypeError(f"{where}: {name} must be {' or '.join(dtypes)}, got {value.dtype}")


def beam_search(
    pre_ids,
    pre_scores,
    ids,
    scores,
    beam_size,
    end_id,
    level=0,
    is_accumulated=True,
    name=None,
    return_parent_idx=False,
):
    """Each source sentence's `beam_size` best extensions of its prefixes: (selected_ids,
    selected_scores[, parent_idx]), the first two with LoD [sources, prefixes]; `ids` None takes
    each score's column as its id, and `is_accumulated` False adds log(scores) to pre_scores."""
    _check(pre_ids, "pre_ids", "beam_search", ("int64",))
    _check(pre_scores, "pre_scores", "beam_search", ("float32", "float64"))
    if ids is not None and not isinstance(ids, Variable):
        raise TypeError(f"beam_search: ids must be a Variable or None, got {type(ids).__name__}")
    _check(scores, "scores", "beam_search", ("float32", "float64"))
    helper = LayerHelper("beam_search", name, inputs=pre_ids)
    selected_scores = helper.create_variable_for_type_inference(pre_scores.dtype)
    selected_ids = helper.create_variable_for_type_inference(pre_ids.dtype)
    parent_idx = helper.create_variable_for_type_inference("int32")
    inputs = {"pre_ids": [pre_ids], "pre_scores": [pre_scores], "scores": [scores]}
    if ids is not None:
        inputs["ids"] = [ids]
    outputs = {"selected_ids": [selected_ids], "selected_scores": [selected_scores], "parent_idx": [parent_idx]}
    attrs = {"level": int(level), "beam_size": int(beam_size), "end_id": int(end_id), "is_accumulated": is_accumulated}
    helper.append_op("beam_search", inputs, outputs, attrs)
    return (selected_ids, selected_scores, parent_idx) if return_parent_idx else (selected_ids, selected_scores)


def beam_search_decode(ids, scores, beam_size, end_id, name=None):
    """The hypotheses of every source, best first, from the tensor arrays of each step's selected
    ids and scores: (sentence_ids, sentence_scores) with LoD [sources, sentences]."""
    _check(ids, "ids", "beam_search_decode", ("int64",))
    _check(scores, "scores", "beam_search_decode", ("float32", "float64"))
    helper = LayerHelper("beam_search_decode", name, inputs=ids)
    sentence_ids = helper.create_variable_for_type_inference(ids.dtype)
    sentence_scores = helper.create_variable_for_type_inference(scores.dtype)
    helper.append_op(
        "beam_search_decode",
        {"Ids": [ids], "Scores": [scores]},
        {"SentenceIds": [sentence_ids], "SentenceScores": [sentence_scores]},
        {"beam_size": int(beam_size), "end_id": int(end_id)},
    )
    return sentence_ids, sentence_scores


def gather_tree(ids, parents):
    """The full id sequence of every final beam, following `parents` back from the last step."""
    _check(ids, "ids", "gather_tree", ("int32", "int64"))
    _check(parents, "parents", "gather_tree", ("int32", "int64"))
    helper = LayerHelper("gather_tree", inputs=ids)
    out = helper.create_variable_for_type_inference(ids.dtype)
    helper.append_op("gather_tree", {"Ids": [ids], "Parents": [parents]}, {"Out": [out]})
    return out
