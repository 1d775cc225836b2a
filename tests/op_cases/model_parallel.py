"""Reasons for the model-parallel collectives (c_allgather, c_reducescatter) and c_allreduce_sum's
gradient: they need peers, so a two-rank job checks them against one process."""

from . import COVERED_ELSEWHERE, NOT_EXPORTED

_JOB = "test_model_parallel_split.py::test_two_ranks_train_as_one_process_training_the_unsplit_model"
COVERED_ELSEWHERE.update(
    {
        "c_allreduce_sum": _JOB + " (forward and gradient, over a real ring)",
        "c_allgather": _JOB + " (and test_c_allgather_and_c_reducescatter_are_each_others_gradient)",
        "c_reducescatter": _JOB + " (c_allgather's gradient)",
    }
)
NOT_EXPORTED.update(
    dict.fromkeys(("c_allgather", "c_reducescatter"), "communication: an ONNX model runs in one process")
)
