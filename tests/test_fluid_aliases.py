"""Fluid 1.8's second names for things fleetgraph has once: each alias is the same object as the name
the rest of the suite tests (or, for a module path, holds it), plus value checks for the few that
are spelled only here."""

from __future__ import annotations

import collections
import math

import numpy as np
import pytest

import fleetgraph.fluid as fluid
from fleetgraph import grad_clip as clip
from fleetgraph import initializer, ir, regularizer
from fleetgraph.fluid.incubate.fleet import collective
from fleetgraph.fluid.incubate.fleet.base import role_maker
from fleetgraph.fluid.incubate.fleet.parameter_server import distribute_transpiler as ps
from fleetgraph.ir import Program, program_guard
from tests.test_ops_misc import _init


def test_optimizer_class_names_are_the_short_ones():
    opt = fluid.optimizer
    pairs = {
        opt.SGDOptimizer: opt.SGD,
        opt.MomentumOptimizer: opt.Momentum,
        opt.AdagradOptimizer: opt.Adagrad,
        opt.AdamOptimizer: opt.Adam,
        opt.AdamaxOptimizer: opt.Adamax,
        opt.AdadeltaOptimizer: opt.Adadelta,
    }
    assert all(a is b for a, b in pairs.items())
    assert opt.GradientClipBase is clip.ClipGradBase and opt.append_gradient_clip_ops is clip.append_gradient_clip_ops
    assert opt.error_clip_callback is clip.error_clip_callback and opt.imperative_base is fluid.dygraph.base
    assert issubclass(fluid.dygraph.NoamDecay, opt.LearningRateDecay)
    assert opt.defaultdict is collections.defaultdict is fluid.defaultdict is fluid.framework.defaultdict


def test_initializer_and_regularizer_long_names():
    assert initializer.MSRAInitializer is initializer.MSRA and initializer.XavierInitializer is initializer.Xavier
    assert initializer.BilinearInitializer is initializer.Bilinear
    assert (
        regularizer.L1DecayRegularizer is regularizer.L1Decay and regularizer.L2DecayRegularizer is regularizer.L2Decay
    )
    w, _ = _init(fluid.initializer.MSRA(uniform=True), [64, 8])
    limit = math.sqrt(6.0 / 64)
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.9 * limit
    t, _ = _init(fluid.initializer.TruncatedNormalInitializer(0.0, 1.0), [200, 50])
    assert np.abs(t).max() <= 2.0
    pa = fluid.param_attr
    assert pa.Initializer is initializer.Initializer and pa.WeightDecayRegularizer is regularizer.WeightDecayRegularizer
    assert pa.WeightNormParamAttr is fluid.WeightNormParamAttr and issubclass(pa.WeightNormParamAttr, pa.ParamAttr)


def test_name_scope_is_one_function_under_each_path():
    assert fluid.name_scope is fluid.framework.name_scope is fluid.optimizer.name_scope is ir.name_scope
    assert clip.name_scope is ir.name_scope
    main = Program()
    with program_guard(main, Program()), fluid.name_scope("block_a"):
        fluid.layers.fill_constant([1], "float32", 1.0)
    assert main.global_block().ops[0].attrs["op_namescope"] == "/block_a/"


def test_layers_spelled_only_here():
    main = Program()
    with program_guard(main, Program()):
        x = fluid.data("x", [None, 1, 3])
        y = fluid.data("y", [None, 3])
        squeezed = fluid.layers.squeeze(x, [1])
        unsqueezed = fluid.layers.unsqueeze(y, [1])
        mse = fluid.layers.mse_loss(squeezed, y)
    xv = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    yv = np.ones((2, 3), np.float32)
    s, u, m = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": xv, "y": yv}, fetch_list=[squeezed, unsqueezed, mse]
    )
    assert s.shape == (2, 3) and u.shape == (2, 1, 3)
    np.testing.assert_allclose(m, ((xv[:, 0] - yv) ** 2).mean(), rtol=1e-6)
    assert fluid.layers.math_op_patch.monkey_patch_variable is fluid.monkey_patch_variable
    assert fluid.layers.metric_op.accuracy is fluid.layers.accuracy
    assert issubclass(fluid.layers.TrainingHelper, fluid.layers.DecodeHelper)
    assert issubclass(fluid.layers.GRUCell, fluid.layers.RNNCell)


def test_create_random_int_lodtensor_is_ints_in_range_with_the_lod():
    t = fluid.create_random_int_lodtensor([[2, 3]], [1], fluid.CPUPlace(), low=0, high=9)
    values = np.array(t)
    assert values.shape == (5, 1) and values.min() >= 0 and values.max() <= 9
    assert t.recursive_sequence_lengths() == [[2, 3]]


def test_module_paths_hold_their_functions():
    c = fluid.contrib
    assert (
        c.memory_usage_calc.memory_usage is c.memory_usage and c.op_frequence.op_freq_statistic is c.op_freq_statistic
    )
    assert c.extend_optimizer.extend_with_decoupled_weight_decay is c.extend_with_decoupled_weight_decay
    assert fluid.parallel_executor.ParallelExecutor is fluid.ParallelExecutor
    with pytest.raises(ValueError, match="CUDAPinnedPlace"):
        fluid.cuda_pinned_places(1)
    with pytest.raises(ValueError, match="CUDAPinnedPlace"):
        fluid.framework.cuda_pinned_places()


def test_fleet_modules_name_the_classes_fleet_uses():
    assert issubclass(role_maker.PaddleCloudRoleMaker, role_maker.RoleMakerBase)
    assert collective.DistributedOptimizer is ps.DistributedOptimizer
    factory = ps.StrategyFactory
    assert isinstance(factory.create_sync_strategy(), ps.SyncStrategy)
    assert isinstance(factory.create_async_strategy(), ps.AsyncStrategy)
    assert isinstance(factory.create_half_async_strategy(), ps.HalfAsyncStrategy)
    assert isinstance(factory.create_geo_strategy(10), ps.GeoStrategy)
    assert collective.fleet is ps.fleet
