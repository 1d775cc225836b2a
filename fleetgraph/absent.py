"""Paddle names fleetgraph does not have, each with the reason, and the error a script gets when it
touches one.

A package that lacks some of Paddle's names ends with `__getattr__ = absent.getattr_for(__name__)`:
touching `fluid.layers.roi_align` then raises `NotInFleetgraph` naming the name and why, instead of
an AttributeError that reads like a typo. The README's table of absent names is generated from
`ABSENT` (`python -m fleetgraph.absent`), and the API coverage test checks the two agree.
"""

from __future__ import annotations

from collections.abc import Callable

DETECTION = "object-detection ops (anchors, ROI pooling, NMS) are outside fleetgraph's scope"
PROTOBUF = "Paddle's protobuf descriptors; fleetgraph's programs and configs are JSON"
CUSTOM_OPS = "fleetgraph's ops are Python declarations (fleetgraph.ir.register_op), there is no C++ op library to load"
COMPLEX = "fleetgraph has no complex dtypes"

TRAINER = (
    "Paddle's internal descriptions of its C++ dataset trainers; fleetgraph's train_from_dataset runs its "
    "threads (and calls a fetch_handler) itself"
)
NEVER_DEFINED = "listed in Paddle 1.8's fluid.__all__ but never defined there: Paddle raises AttributeError too"

# Paddle's qualified name -> why fleetgraph does not have it
ABSENT: dict[str, str] = {
    **dict.fromkeys(["paddle.fluid.ComplexVariable", "paddle.fluid.framework.ComplexVariable"], COMPLEX),
    **dict.fromkeys(
        [
            "paddle.fluid.framework_pb2",
            "paddle.fluid.framework.framework_pb2",
            "paddle.fluid.backward.framework_pb2",
            "paddle.fluid.initializer.VarDesc",
        ],
        PROTOBUF,
    ),
    **dict.fromkeys(
        ["paddle.fluid.DataFeedDesc", "paddle.fluid.data_feed_desc"],
        "DataFeedDesc parses Paddle's protobuf text of a data feed; fleetgraph's Dataset takes its slots "
        "(set_use_var) and batch size directly",
    ),
    **dict.fromkeys(
        [
            f"paddle.fluid.{name}"
            for name in (
                "DistMultiTrainer",
                "MultiTrainer",
                "PipelineTrainer",
                "TrainerDesc",
                "TrainerFactory",
                "trainer_desc",
                "FetchHandlerMonitor",
                "executor.FetchHandlerMonitor",
                "executor.TrainerFactory",
            )
        ],
        TRAINER,
    ),
    **dict.fromkeys(["paddle.fluid.load_op_library", "paddle.fluid.framework.load_op_library"], CUSTOM_OPS),
    "paddle.fluid.learning_rate_decay": NEVER_DEFINED,
    **dict.fromkeys(["paddle.fluid.dataset.data_feed_pb2", "paddle.fluid.dataset.text_format"], PROTOBUF),
    **dict.fromkeys(
        [
            "paddle.fluid.layers.detection",
            "paddle.fluid.metrics.detection",
            "paddle.fluid.metrics.DetectionMAP",
            *(
                f"paddle.fluid.layers.{name}"
                for name in "roi_pool roi_align prroi_pool psroi_pool deformable_conv deformable_roi_pooling".split()
            ),
        ],
        DETECTION,
    ),
    "paddle.fluid.layers.device": (
        "fluid.layers.device (get_places) was deprecated in Paddle 1.6; fluid.cpu_places is here"
    ),
    "paddle.fluid.layers.load": (
        "Paddle 1.8.5's own layer passes output= to append_op, which ignores it, so its load op has no Out and "
        "fails its shape check when appended; fluid.io.load and load_vars load variables"
    ),
    "paddle.dataset.uci_housing.fluid_model": (
        "downloads Paddle's trained fit-a-line model; fleetgraph downloads nothing (train examples/fit_a_line)"
    ),
    "paddle.dataset.uci_housing.feature_range": (
        "draws a matplotlib chart of the features' ranges; fleetgraph does not depend on matplotlib"
    ),
    **dict.fromkeys(["paddle.real", "paddle.imag"], COMPLEX),
    "paddle.XPUPlace": "Baidu Kunlun XPU devices: fleetgraph runs on CPUs (and, later, CUDA GPUs)",
    "paddle.utils.load_op_library": CUSTOM_OPS,
    "paddle.utils.download": (
        "downloads pretrained weights and datasets; fleetgraph downloads nothing (datasets read Paddle's cache "
        "or make a synthetic stand-in)"
    ),
    "paddle.utils.dump_config": "listed in Paddle 2.0's paddle.utils.__all__ but never defined there",
    "paddle.utils.OpLastCheckpointChecker": (
        "reads Paddle's C++ registry of op-version checkpoints; fleetgraph's ops are Python declarations "
        "without versions"
    ),
    "paddle.static.amp": (
        "float16 training needs float16 kernels, and fleetgraph's CPU kernels (as Paddle's CPU build) have "
        "none; bfloat16 mixed precision is dynamic-mode paddle.amp's (auto_cast, decorate)"
    ),
    "paddle.static.nn.deform_conv2d": DETECTION,
    "paddle.vision.ops": DETECTION,
    "paddle.fluid.clip.imperative_base": (
        "the clip module's own import of fluid.dygraph.base, which is at its own path; here the clip classes sit "
        "below fluid, so re-exporting it would be an import cycle"
    ),
    "paddle.fluid.io.Evaluator": (
        "fluid.evaluator's program-side evaluators are deprecated in Paddle 1.8 for fluid.metrics, which fleetgraph has"
    ),
    "paddle.fluid.evaluator": (
        "fluid.evaluator's program-side evaluators are deprecated in Paddle 1.8 for fluid.metrics, which fleetgraph has"
    ),
    "paddle.fluid.incubate.fleet.base.role_maker.GeneralRoleMaker": (
        "its Gloo rendezvous through HDFS or a shared file system is not built; PaddleCloudRoleMaker reads "
        "the same environment variables"
    ),
    "paddle.fluid.incubate.fleet.collective.BDFS": (
        "an HDFS client driving the hadoop command line; fleetgraph saves to local (or mounted) paths"
    ),
    "paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler.Communicator": (
        "Paddle's Python handle on its C++ communicator thread; fleetgraph's trainers start and stop their "
        "communicator inside fleet.init_worker() and fleet.stop_worker()"
    ),
    **{
        f"paddle.fluid.contrib.{name}": reason
        for names, reason in (
            (
                "slim Compressor quantize QuantizeTranspiler",
                "model compression and quantization (PaddleSlim) are not built: fleetgraph trains in float32",
            ),
            (
                "mixed_precision",
                "float16 training needs float16 kernels, and fleetgraph's CPU kernels (as Paddle's CPU build) have "
                "none; bfloat16 mixed precision is dynamic-mode paddle.amp's (auto_cast, decorate)",
            ),
            (
                "HDFSClient multi_download multi_upload utils",
                "HDFS clients driving the hadoop command line; fleetgraph reads and writes local (or mounted) paths",
            ),
            (
                "decoder InitState StateCell TrainingDecoder BeamSearchDecoder",
                "the contrib decoder API superseded in Paddle 1.8 by fluid.layers.BeamSearchDecoder and "
                "dynamic_decode, which fleetgraph has",
            ),
            (
                "match_matrix_tensor sequence_topk_avg_pooling var_conv_2d search_pyramid_hash rank_attention "
                "tdm_child tdm_sampler fused_elemwise_activation partial_concat partial_sum shuffle_batch reader",
                "Baidu-internal search, tree-sampling and fused ops of Paddle's contrib, not built",
            ),
            ("multiclass_nms2", DETECTION),
            (
                "convert_dist_to_sparse_program load_persistables_for_increment load_persistables_for_inference",
                "helpers of Paddle's distributed-lookup-table inference; fleetgraph's pservers save and load their "
                "tables themselves (fleet.save_persistables)",
            ),
        )
        for name in names.split()
    },
    "paddle.fluid.optimizer.DGCMomentumOptimizer": (
        "deep gradient compression for GPU all-reduce; Paddle's CPU build refuses it too"
    ),
    "paddle.fluid.optimizer.PipelineOptimizer": (
        "pipeline parallelism (a PipelineTrainer running device_guard sections on several devices) is not built"
    ),
}


class NotInFleetgraph(NotImplementedError):
    """A Paddle name fleetgraph deliberately does not have."""


def getattr_for(module: str, paddle_module: str | None = None) -> Callable[[str], object]:
    """The module `__getattr__` that turns this module's absent Paddle names into NotInFleetgraph;
    `paddle_module` names the Paddle module it stands for when the path differs (fleetgraph.grad_clip is
    paddle.fluid.clip)."""
    prefix = (paddle_module or "paddle" + module.removeprefix("fleetgraph")) + "."

    def __getattr__(name: str) -> object:
        reason = ABSENT.get(prefix + name)
        if reason is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise NotInFleetgraph(f"{prefix}{name} is not in fleetgraph: {reason}")

    return __getattr__


def readme_table() -> str:
    """The README's table of absent names, grouped by reason."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in sorted(ABSENT.items()):
        by_reason.setdefault(reason, []).append(name)
    rows = ["| Names | Why fleetgraph does not have them |", "|---|---|"]
    rows += [f"| {', '.join(f'`{n}`' for n in names)} | {reason} |" for reason, names in by_reason.items()]
    return "\n".join(rows)


if __name__ == "__main__":
    print(readme_table())
