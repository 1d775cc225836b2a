"""The decode helpers of Fluid 1.8 (`fluid.layers.TrainingHelper`, `GreedyEmbeddingHelper`,
`SampleEmbeddingHelper`) and `BasicDecoder`, which steps a cell with one of them under
`dynamic_decode`: teacher forcing, greedy decoding and sampling, as Paddle's."""

from __future__ import annotations

import collections

from .creation import sampling_id
from .decode import Decoder, map_structure
from .indexing import pad
from .manipulation import argmax, gather
from .math import elementwise_div, equal, less_equal, softmax
from .tensor import cast, fill_constant, fill_constant_batch_size_like, transpose
from .tensor_shape import squeeze

__all__ = ["BasicDecoder", "DecodeHelper", "GreedyEmbeddingHelper", "SampleEmbeddingHelper", "TrainingHelper"]


class DecodeHelper:
    """What a BasicDecoder asks of its helper: the first inputs and finished flags, the ids sampled
    from each step's outputs, and the next inputs, finished flags and states."""

    def initialize(self):
        raise NotImplementedError

    def sample(self, time, outputs, states):
        raise NotImplementedError

    def next_inputs(self, time, outputs, states, sample_ids):
        raise NotImplementedError


def _time_major(x, time_major: bool):
    """x as [time, batch, ...]."""
    if time_major:
        return x
    return transpose(x, [1, 0, *range(2, len(x.shape))])


class TrainingHelper(DecodeHelper):
    """Teacher forcing: step t reads inputs[:, t] (inputs[t] if time_major); a sequence is finished once
    t reaches its length. The inputs get one padding step at the end, as Paddle's, so the step after
    the last reads zeros."""

    def __init__(self, inputs, sequence_length, time_major=False) -> None:
        self.inputs, self.sequence_length, self.time_major = inputs, sequence_length, time_major

        def padded(x):
            paddings = (
                [0, 1] + [0, 0] * (len(x.shape) - 1) if time_major else [0, 0, 0, 1] + [0, 0] * (len(x.shape) - 2)
            )
            return _time_major(pad(x, paddings), time_major)

        self.inputs_ = map_structure(padded, inputs)

    def initialize(self):
        finished = equal(self.sequence_length, fill_constant([1], self.sequence_length.dtype, 0))
        first = map_structure(lambda x: squeeze(gather(x, fill_constant([1], "int64", 0)), [0]), self.inputs_)
        return first, finished

    def sample(self, time, outputs, states):
        return argmax(outputs, axis=-1)

    def next_inputs(self, time, outputs, states, sample_ids):
        time = cast(time, "int64") if time.dtype != "int64" else time
        next_time = time + 1
        length = cast(self.sequence_length, "int64") if self.sequence_length.dtype != "int64" else self.sequence_length
        finished = less_equal(length, next_time)
        inputs = map_structure(lambda x: squeeze(gather(x, next_time), [0]), self.inputs_)
        return finished, inputs, states


class GreedyEmbeddingHelper(DecodeHelper):
    """Greedy decoding: each step feeds back the embedding of its arg-max id; a sequence is finished
    when it emits end_token."""

    def __init__(self, embedding_fn, start_tokens, end_token) -> None:
        self.embedding_fn, self.start_tokens = embedding_fn, start_tokens
        self.end_token = fill_constant([1], "int64", end_token)

    def initialize(self):
        finished = fill_constant_batch_size_like(self.start_tokens, [-1], "bool", False)
        return self.embedding_fn(self.start_tokens), finished

    def sample(self, time, outputs, states):
        return argmax(outputs, axis=-1)

    def next_inputs(self, time, outputs, states, sample_ids):
        return equal(sample_ids, self.end_token), self.embedding_fn(sample_ids), states


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """Like greedy decoding, but each id is drawn from softmax(outputs / softmax_temperature)
    (sampling_id with `seed`)."""

    def __init__(self, embedding_fn, start_tokens, end_token, softmax_temperature=None, seed=None) -> None:
        super().__init__(embedding_fn, start_tokens, end_token)
        self.softmax_temperature = (
            fill_constant([1], "float32", softmax_temperature) if softmax_temperature is not None else None
        )
        self.seed = seed

    def sample(self, time, outputs, states):
        logits = outputs if self.softmax_temperature is None else elementwise_div(outputs, self.softmax_temperature)
        probs = softmax(logits)
        probs.stop_gradient = True
        return sampling_id(probs, seed=self.seed or 0, dtype=self.start_tokens.dtype)


class BasicDecoder(Decoder):
    """One cell step per decoding step: the cell's outputs (through output_fn), the helper's sampled
    ids, and the helper's next inputs and finished flags. Outputs are OutputWrapper(cell_outputs,
    sample_ids)."""

    class OutputWrapper(collections.namedtuple("OutputWrapper", ("cell_outputs", "sample_ids"))):
        pass

    def __init__(self, cell, helper: DecodeHelper, output_fn=None) -> None:
        self.cell, self.helper, self.output_fn = cell, helper, output_fn

    def initialize(self, initial_cell_states):
        inputs, finished = self.helper.initialize()
        return inputs, initial_cell_states, finished

    def step(self, time, inputs, states, **kwargs):
        cell_outputs, cell_states = self.cell(inputs, states, **kwargs)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        sample_ids = self.helper.sample(time=time, outputs=cell_outputs, states=cell_states)
        sample_ids.stop_gradient = True
        finished, next_inputs, next_states = self.helper.next_inputs(
            time=time, outputs=cell_outputs, states=cell_states, sample_ids=sample_ids
        )
        return self.OutputWrapper(cell_outputs, sample_ids), next_states, next_inputs, finished
