"""`fluid.io`: saving and loading variables, programs' state and inference models, the readers
(PyReader, DataLoader, paddle.reader's decorators), and the names Paddle 1.8's module imports."""

from functools import reduce

from .. import absent
from .. import compat as cpt
from .. import io as dataloader
from ..data import DatasetBase, InMemoryDataset
from ..data.feeder import DataFeeder
from ..executor import Executor, global_scope
from ..io import BatchSampler, Dataset, default_collate_fn
from ..ir import (
    Parameter,
    Program,
    Variable,
    default_main_program,
    default_startup_program,
    program_guard,
    unique_name,
)
from ..ir.unique_name import UniqueNameGenerator
from ..layers.io import double_buffer, monkey_patch_reader_methods
from ..reader import (
    ComposeNotAligned,
    batch,
    buffered,
    cache,
    chain,
    compose,
    firstn,
    map_readers,
    multiprocess_reader,
    shuffle,
    xmap_readers,
)
from ..static import CompiledProgram, cpu_places
from ..store.persistence import (
    get_program_parameter,
    get_program_persistable_vars,
    is_belong_to_optimizer,
    is_parameter,
    is_persistable,
    load,
    load_inference_model,
    load_params,
    load_persistables,
    load_program_state,
    load_vars,
    save,
    save_inference_model,
    save_params,
    save_persistables,
    save_vars,
    set_program_state,
)
from . import layers, reader
from .framework import in_dygraph_mode
from .log_helper import get_logger
from .reader import (
    BatchedTensorProvider,
    CleanupFuncRegistrar,
    DataLoader,
    PyReader,
    multiprocess_queue_set,
)

__getattr__ = absent.getattr_for(__name__)

__all__ = [
    "BatchSampler",
    "BatchedTensorProvider",
    "CleanupFuncRegistrar",
    "ComposeNotAligned",
    "CompiledProgram",
    "DataFeeder",
    "DataLoader",
    "Dataset",
    "DatasetBase",
    "Executor",
    "InMemoryDataset",
    "Parameter",
    "Program",
    "PyReader",
    "UniqueNameGenerator",
    "Variable",
    "batch",
    "buffered",
    "cache",
    "chain",
    "compose",
    "cpt",
    "cpu_places",
    "dataloader",
    "default_collate_fn",
    "default_main_program",
    "default_startup_program",
    "double_buffer",
    "firstn",
    "get_logger",
    "get_program_parameter",
    "get_program_persistable_vars",
    "global_scope",
    "in_dygraph_mode",
    "is_belong_to_optimizer",
    "is_parameter",
    "is_persistable",
    "layers",
    "load",
    "load_inference_model",
    "load_params",
    "load_persistables",
    "load_program_state",
    "load_vars",
    "map_readers",
    "monkey_patch_reader_methods",
    "multiprocess_queue_set",
    "multiprocess_reader",
    "program_guard",
    "reader",
    "reduce",
    "save",
    "save_inference_model",
    "save_params",
    "save_persistables",
    "save_vars",
    "set_program_state",
    "shuffle",
    "unique_name",
    "xmap_readers",
]
