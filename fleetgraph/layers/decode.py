"""Decoding a sequence step by step: `Decoder`, `BeamSearchDecoder` and `dynamic_decode`, Paddle's
(fluid.layers 1.8, paddle.nn 2.0).

A decoder says how to start (`initialize`), how one step goes (`step`: the cell on the inputs,
then what to emit and feed next) and how to finish (`finalize`). `dynamic_decode` runs the steps
until every sequence is finished or `max_step_num`: in a static program as a `While` whose step
inputs, states and outputs go through tensor arrays, as Paddle builds it, so the whole decode is
one program; in dynamic mode as a Python loop over the same decoder calls.
"""

from __future__ import annotations

import collections
import warnings

import numpy as np

from ..dygraph.tensor import Tensor
from ..ir.errors import FleetgraphError
from ..ir.framework import default_main_program, get_default_dtype
from .beam_search import gather_tree
from .control_flow import While
from .math import (
    elementwise_add,
    elementwise_mul,
    equal,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    reduce_all,
    softmax,
)
from .nn import topk
from .tensor import assign, cast, fill_constant, fill_constant_batch_size_like, increment, reshape, transpose
from .tensor_array import array_read, array_write, create_array, tensor_array_to_tensor
from .tensor_shape import elementwise_floordiv, elementwise_mod, expand, gather_nd, shape, stack, unsqueeze
from .tensor_shape import range as arange

# -- nested structures of variables (Paddle's utils.map_structure / flatten) ------------------------


def flatten(structure) -> list:
    if isinstance(structure, (list, tuple)):
        return [leaf for part in structure for leaf in flatten(part)]
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    return [structure]


def map_structure(fn, *structures):
    first = structures[0]
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(map_structure(fn, *parts) for parts in zip(*structures)))
    if isinstance(first, (list, tuple)):
        for other in structures[1:]:
            if not isinstance(other, (list, tuple)) or len(other) != len(first):
                raise ValueError(f"map_structure: structures differ: {first!r} and {other!r}")
        return type(first)(map_structure(fn, *parts) for parts in zip(*structures))
    if isinstance(first, dict):
        return {key: map_structure(fn, *(s[key] for s in structures)) for key in first}
    return fn(*structures)


# -- decoders -------------------------------------------------------------------------------------


class Decoder:
    """The interface dynamic_decode drives: initialize(inits) -> (inputs, states, finished);
    step(time, inputs, states) -> (outputs, next_states, next_inputs, finished);
    finalize(outputs, final_states, sequence_lengths) -> (outputs, final_states)."""

    def initialize(self, inits):
        raise NotImplementedError

    def step(self, time, inputs, states, **kwargs):
        raise NotImplementedError

    def finalize(self, outputs, final_states, sequence_lengths):
        raise NotImplementedError

    @property
    def tracks_own_finished(self) -> bool:
        """False: dynamic_decode ORs each step's finished into the last one and counts lengths. A
        decoder that reorders its entries (beam search) tracks both itself."""
        return False


class BeamSearchDecoder(Decoder):
    """Beam search with `cell`: each step scores every (beam, token) by its accumulated log
    probability, keeps the best `beam_size` per batch entry, and carries their cell states; a
    finished beam only extends with end_token at no cost. finalize traces the kept tokens back to
    the full sequences (gather_tree): outputs [batch, time, beam] (batch major)."""

    OutputWrapper = collections.namedtuple("OutputWrapper", ("scores", "predicted_ids", "parent_ids"))
    StateWrapper = collections.namedtuple("StateWrapper", ("cell_states", "log_probs", "finished", "lengths"))
    kinf = 1e9

    def __init__(self, cell, start_token, end_token, beam_size, embedding_fn=None, output_fn=None) -> None:
        self.cell, self.embedding_fn, self.output_fn = cell, embedding_fn, output_fn
        self.start_token, self.end_token, self.beam_size = int(start_token), int(end_token), int(beam_size)

    @property
    def tracks_own_finished(self) -> bool:
        """True: a step reorders the beams, so a position finished before may hold an unfinished beam
        now; OR-ing by position (dynamic_decode's tracking) would stop decoding early."""
        return True

    @staticmethod
    def tile_beam_merge_with_batch(x, beam_size):
        """[batch, ...] -> [batch * beam_size, ...], each entry repeated beam_size times in a row."""
        x = unsqueeze(x, [1])
        times = [1] * len(x.shape)
        times[1] = beam_size
        x = expand(x, times)
        return reshape(x, [-1, *x.shape[2:]])

    def _split_batch_beams(self, x):
        return reshape(x, [-1, self.beam_size, *x.shape[1:]])

    def _merge_batch_beams(self, x):
        return reshape(x, [-1, *x.shape[2:]])

    def _expand_to_beam_size(self, x):
        x = unsqueeze(x, [1])
        times = [1] * len(x.shape)
        times[1] = self.beam_size
        return expand(x, times)

    def _mask_probs(self, probs, finished):
        """A finished beam's next log probabilities: 0 for end_token, -inf (kinf) for the rest."""
        finished = cast(finished, probs.dtype)
        ended = elementwise_mul(expand(unsqueeze(finished, [2]), [1, 1, self.vocab_size]), self.noend_mask, axis=-1)
        return ended - elementwise_mul(probs, finished - 1.0, axis=0)

    def _gather(self, x, indices, batch_size):
        """x[b, indices[b, k]] for every batch entry b and beam k."""
        batch_size = cast(batch_size, indices.dtype) if batch_size.dtype != indices.dtype else batch_size
        batch_pos = expand(unsqueeze(arange(0, batch_size, 1, dtype=indices.dtype), [1]), [1, self.beam_size])
        coordinates = stack([batch_pos, indices], axis=2)
        coordinates.stop_gradient = True
        return gather_nd(x, coordinates)

    def initialize(self, initial_cell_states):
        state = flatten(initial_cell_states)[0]
        self.batch_size = shape(state)[0:1]
        self.end_token_tensor = fill_constant([1], "int64", self.end_token)
        cell_states = map_structure(self._expand_to_beam_size, initial_cell_states)
        per_beam = [-1, self.beam_size]  # [batch, beam] shaped after the state's batch
        inputs = fill_constant_batch_size_like(state, per_beam, "int64", self.start_token)
        first = np.array([[0.0] + [-self.kinf] * (self.beam_size - 1)], dtype=_score_dtype())  # one live beam
        log_probs = elementwise_add(
            fill_constant_batch_size_like(state, per_beam, first.dtype.name, 0.0), assign(first)
        )
        finished = fill_constant_batch_size_like(state, per_beam, "bool", False)
        lengths = fill_constant_batch_size_like(state, per_beam, "int64", 0)
        inputs = self.embedding_fn(inputs) if self.embedding_fn else inputs
        return inputs, self.StateWrapper(cell_states, log_probs, finished, lengths), finished

    def _beam_search_step(self, time, logits, next_cell_states, beam_state):
        self.vocab_size = logits.shape[-1]
        vocab = fill_constant([1], "int64", self.vocab_size)
        noend = np.full(self.vocab_size, -self.kinf, dtype=_score_dtype())
        noend[self.end_token] = 0.0
        self.noend_mask = assign(noend)
        step_log_probs = self._mask_probs(log(softmax(logits)), beam_state.finished)
        log_probs = elementwise_add(step_log_probs, beam_state.log_probs, axis=0)
        scores = reshape(log_probs, [-1, self.beam_size * self.vocab_size])
        topk_scores, topk_indices = topk(scores, k=self.beam_size)
        beam_indices = elementwise_floordiv(topk_indices, vocab)
        token_indices = elementwise_mod(topk_indices, vocab)
        next_log_probs = self._gather(scores, topk_indices, self.batch_size)
        next_cell_states = map_structure(lambda x: self._gather(x, beam_indices, self.batch_size), next_cell_states)
        next_finished = self._gather(beam_state.finished, beam_indices, self.batch_size)
        next_lengths = self._gather(beam_state.lengths, beam_indices, self.batch_size)
        next_lengths = next_lengths + cast(logical_not(next_finished), beam_state.lengths.dtype)
        next_finished = logical_or(next_finished, equal(token_indices, self.end_token_tensor))
        output = self.OutputWrapper(topk_scores, token_indices, beam_indices)
        return output, self.StateWrapper(next_cell_states, next_log_probs, next_finished, next_lengths)

    def step(self, time, inputs, states, **kwargs):
        inputs = map_structure(self._merge_batch_beams, inputs)
        cell_states = map_structure(self._merge_batch_beams, states.cell_states)
        cell_outputs, next_cell_states = self.cell(inputs, cell_states, **kwargs)
        cell_outputs = map_structure(self._split_batch_beams, cell_outputs)
        next_cell_states = map_structure(self._split_batch_beams, next_cell_states)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        output, state = self._beam_search_step(time, cell_outputs, next_cell_states, states)
        sample_ids = output.predicted_ids
        sample_ids.stop_gradient = True
        next_inputs = self.embedding_fn(sample_ids) if self.embedding_fn else sample_ids
        return output, state, next_inputs, state.finished

    def finalize(self, outputs, final_states, sequence_lengths):
        return gather_tree(outputs.predicted_ids, outputs.parent_ids), final_states


def _score_dtype() -> str:
    """Beam scores are float32, or float64 under that default, as Paddle's BeamSearchDecoder."""
    return "float64" if get_default_dtype() == "float64" else "float32"


# -- dynamic_decode --------------------------------------------------------------------------------


def dynamic_decode(
    decoder,
    inits=None,
    max_step_num=None,
    output_time_major=False,
    impute_finished=False,
    is_test=False,
    return_length=False,
    **kwargs,
):
    """Run `decoder` until every sequence is finished (or max_step_num steps): (final_outputs,
    final_states[, sequence_lengths]), outputs [batch, time, ...] unless output_time_major."""
    if not isinstance(decoder, Decoder):
        raise TypeError(f"dynamic_decode: expected a Decoder, got {type(decoder).__name__}")
    inputs, states, finished = decoder.initialize(inits)
    if isinstance(finished, Tensor):
        return _decode_eagerly(decoder, inputs, states, finished, max_step_num, output_time_major,
                               impute_finished, return_length, **kwargs)  # fmt: skip
    return _decode_static(decoder, inputs, states, finished, max_step_num, output_time_major, impute_finished,
                          is_test, return_length, **kwargs)  # fmt: skip


def _kept(state, new_state, finished):
    """new_state where the sequence goes on, state where it had finished (impute_finished)."""
    dtype = state.dtype
    if dtype == "bool":
        state, new_state = cast(state, "float32"), cast(new_state, "float32")
    mask = cast(finished, state.dtype)
    mask.stop_gradient = True
    out = elementwise_mul(state, mask, axis=0) - elementwise_mul(new_state, mask - 1.0, axis=0)
    return cast(out, dtype) if dtype == "bool" else out


def _tracked(decoder, states, next_states, finished, next_finished, lengths, impute):
    """A step's (states, finished, lengths) as Paddle's dynamic_decode keeps them: ORed with the last
    finished, lengths counted and, with impute_finished, finished entries' states kept, unless the
    decoder tracks its own finished (then its states' `lengths` are the lengths)."""
    if decoder.tracks_own_finished:
        if not hasattr(next_states, "lengths"):
            warnings.warn(
                "`next_states` has no `lengths` attribute, the returned `sequence_lengths` would be all zeros.",
                stacklevel=3,
            )
        return next_states, next_finished, getattr(next_states, "lengths", lengths)
    next_lengths = elementwise_add(lengths, cast(logical_not(finished), lengths.dtype))
    if impute:
        next_states = map_structure(lambda old, new: _kept(old, new, finished), states, next_states)
    return next_states, logical_or(next_finished, finished), next_lengths


def _time_to_batch_major(x):
    return transpose(x, [1, 0, *range(2, len(x.shape))])


def _finish(decoder, outputs, states, lengths, output_time_major, return_length):
    try:
        outputs, states = decoder.finalize(outputs, states, lengths)
    except NotImplementedError:  # finalize is optional (Paddle's): the stacked outputs are the result
        pass
    if not output_time_major:
        outputs = map_structure(_time_to_batch_major, outputs)
    return (outputs, states, lengths) if return_length else (outputs, states)


def _decode_static(decoder, inputs, states, finished, max_step_num, time_major, impute, is_test, return_length, **kw):
    program = default_main_program()
    finished.stop_gradient = True
    step = fill_constant([1], "int64", 0)
    cond = logical_not(reduce_all(finished))
    limit = None if max_step_num is None else fill_constant([1], "int64", int(max_step_num))
    lengths = fill_constant_batch_size_like(finished, list(finished.shape), "int64", 0)
    lengths.stop_gradient = True
    input_arrays = map_structure(lambda x: array_write(x, step), inputs)
    state_arrays = map_structure(lambda x: array_write(x, step), states)
    output_arrays = []
    loop = While(cond, is_test=is_test)
    with loop.block():
        now_inputs = map_structure(lambda a: array_read(a, step), input_arrays)
        now_states = map_structure(lambda a: array_read(a, step), state_arrays)
        outputs, next_states, next_inputs, next_finished = decoder.step(step, now_inputs, now_states, **kw)
        next_states, next_finished, next_lengths = _tracked(
            decoder, now_states, next_states, finished, next_finished, lengths, impute
        )
        # the outputs' arrays belong to the parent block: they hold every step's output after the loop
        current, program.current_block_idx = program.current_block_idx, program.current_block().parent_idx
        output_arrays = map_structure(lambda x: create_array(x.dtype), outputs)
        program.current_block_idx = current
        map_structure(lambda x, a: array_write(x, step, array=a), outputs, output_arrays)
        increment(step, 1.0, in_place=True)
        map_structure(lambda x, a: array_write(x, step, array=a), next_inputs, input_arrays)
        map_structure(lambda x, a: array_write(x, step, array=a), next_states, state_arrays)
        assign(next_finished, finished)
        assign(next_lengths, lengths)
        going_on = logical_not(reduce_all(finished))
        if limit is not None:
            going_on = logical_and(going_on, less_equal(step, limit))
        assign(going_on, cond)
    final_outputs = map_structure(lambda a: tensor_array_to_tensor(a, axis=0, use_stack=True)[0], output_arrays)
    final_states = map_structure(lambda a: array_read(a, step), state_arrays)
    return _finish(decoder, final_outputs, final_states, lengths, time_major, return_length)


def _decode_eagerly(decoder, inputs, states, finished, max_step_num, time_major, impute, return_length, **kw):
    lengths = fill_constant_batch_size_like(finished, list(finished.shape), "int64", 0)
    steps, outputs_by_step, t = 0, [], fill_constant([1], "int64", 0)
    while not bool(np.all(finished.numpy())):
        if max_step_num is not None and steps > int(max_step_num):
            break
        outputs, next_states, next_inputs, next_finished = decoder.step(t, inputs, states, **kw)
        next_states, next_finished, lengths = _tracked(
            decoder, states, next_states, finished, next_finished, lengths, impute
        )
        outputs_by_step.append(outputs)
        inputs, states, finished = next_inputs, next_states, next_finished
        steps += 1
        t = fill_constant([1], "int64", steps)
    if not outputs_by_step:
        raise FleetgraphError("dynamic_decode: every sequence was finished before the first step")
    stacked = map_structure(lambda *xs: stack(list(xs), axis=0), *outputs_by_step)
    return _finish(decoder, stacked, states, lengths, time_major, return_length)
