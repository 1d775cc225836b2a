"""Op declarations, one family per module; importing this package registers them all."""

from . import (  # noqa: F401
    activation,
    beam_search,
    clip,
    collective,
    control_flow,
    conv,
    crf,
    distributed,
    linalg,
    loss,
    math,
    metric,
    nn,
    norm,
    optimizer,
    pool,
    rank_table,
    reader,
    recurrent,
    recurrent_cells,
    recurrent_lstm,
    recurrent_op,
    reduce,
    rnn,
    sampled,
    sequence,
    sequence_pad,
    sequence_rows,
    split_merge,
    table,
    tensor,
    tensor_array,
)
from .selected_rows import SelectedRows

__all__ = ["SelectedRows"]
