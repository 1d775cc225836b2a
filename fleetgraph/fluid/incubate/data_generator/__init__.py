"""`fluid.incubate.data_generator`: Paddle's data generators (fleetgraph/data/generator.py)."""

from ....data.generator import DataGenerator, MultiSlotDataGenerator, MultiSlotStringDataGenerator

__all__ = ["DataGenerator", "MultiSlotDataGenerator", "MultiSlotStringDataGenerator"]
