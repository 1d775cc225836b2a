"""fleetgraph: a static-graph compiler and runtime for distributed training, with PaddlePaddle's API.

`import fleetgraph as paddle` and `import fleetgraph.fluid as fluid` run Paddle static-graph scripts.
"""

from . import (
    amp,
    dataset,
    distributed,
    incubate,
    initializer,
    io,
    jit,
    layers,
    metric,
    nn,
    onnx,
    ops,  # noqa: F401  (registers every op)
    optimizer,
    reader,
    regularizer,
    static,
    tensor,
    text,
    utils,
    vision,
)
from .device_state import get_cuda_rng_state, get_cudnn_version, is_compiled_with_xpu, set_cuda_rng_state
from .distributed import DataParallel
from .dygraph.device import get_device, set_device
from .dygraph.mode import disable_static, enable_static, in_dynamic_mode, no_grad
from .dygraph.save_load import load, save
from .dygraph.tensor import Tensor, is_tensor, set_printoptions, to_tensor
from .executor import CPUPlace, CUDAPlace, Executor, Scope, global_scope
from .executor import seed as _seed_generator
from .executor.place import CUDAPinnedPlace, is_compiled_with_cuda
from .fluid.dygraph.base import grad
from .hapi import Model, callbacks, flops, summary
from .inspect.report import build_report as _build_report
from .ir import (
    FleetgraphError,
    Program,
    default_main_program,
    default_startup_program,
    get_default_dtype,
    set_default_dtype,
)
from .jit.api import trace_for_export as _trace_for_export
from .layers.math import monkey_patch_variable
from .layers.tensor import create_parameter
from .param_attr import ParamAttr
from .reader import batch
from .tensor import *  # noqa: F401,F403
from .tensor_api import (
    abs,
    add,
    add_n,
    cast,
    concat,
    divide,
    exp,
    flatten,
    full,
    log,
    matmul,
    mean,
    multiply,
    ones,
    reshape,
    scale,
    sign,
    split,
    sqrt,
    square,
    subtract,
    sum,
    tanh,
    topk,
    transpose,
    zeros,
)
from .tensor_api import monkey_patch_varbase as monkey_patch_math_varbase
from .transpiler.dump import set_report_renderer as _set_report_renderer

__version__ = "0.1.0"

bool = "bool"  # noqa: A001
float16, bfloat16, float32, float64 = "float16", "bfloat16", "float32", "float64"
int8, int16, int32, int64, uint8 = "int8", "int16", "int32", "int64", "uint8"


def seed(value: int) -> None:
    """Fix every random draw from here on: the default programs' random_seed and the global generator."""
    default_main_program().random_seed = int(value)
    default_startup_program().random_seed = int(value)
    _seed_generator(value)


# A transpile under FLEETGRAPH_DUMP_DIR (and `fleetgraph transpile --html`) draws its report with the
# viewers' page; the transpiler sits below the viewers, so the package that holds both joins them.
_set_report_renderer(_build_report)
# paddle.onnx.export(layer, ...) traces with paddle.jit, which sits above onnx: joined here likewise
onnx.set_layer_tracer(_trace_for_export)

from . import common_ops_import, fluid  # noqa: E402  (fluid re-exports the modules above)

__all__ = [
    "CPUPlace",
    "CUDAPlace",
    "DataParallel",
    "Executor",
    "FleetgraphError",
    "ParamAttr",
    "Program",
    "Scope",
    "Tensor",
    "abs",
    "add",
    "add_n",
    "batch",
    "cast",
    "common_ops_import",
    "concat",
    "dataset",
    "default_main_program",
    "default_startup_program",
    "disable_static",
    "distributed",
    "divide",
    "enable_static",
    "exp",
    "flatten",
    "fluid",
    "is_compiled_with_cuda",
    "full",
    "get_default_dtype",
    "get_device",
    "global_scope",
    "in_dynamic_mode",
    "incubate",
    "initializer",
    "io",
    "is_tensor",
    "jit",
    "layers",
    "load",
    "log",
    "matmul",
    "mean",
    "metric",
    "multiply",
    "no_grad",
    "nn",
    "ones",
    "optimizer",
    "reader",
    "regularizer",
    "reshape",
    "save",
    "scale",
    "seed",
    "set_default_dtype",
    "set_device",
    "sign",
    "split",
    "sqrt",
    "square",
    "static",
    "vision",
    "amp",
    "CUDAPinnedPlace",
    "create_parameter",
    "get_cuda_rng_state",
    "get_cudnn_version",
    "grad",
    "is_compiled_with_xpu",
    "monkey_patch_math_varbase",
    "monkey_patch_variable",
    "set_cuda_rng_state",
    "set_printoptions",
    "Model",
    "callbacks",
    "flops",
    "summary",
    "onnx",
    "text",
    "tensor",
    "subtract",
    "sum",
    "tanh",
    "to_tensor",
    "topk",
    "transpose",
    "utils",
    "zeros",
]

# Paddle names fleetgraph does not have raise saying why (fleetgraph.absent)
from . import absent as _absent  # noqa: E402

__getattr__ = _absent.getattr_for(__name__)
