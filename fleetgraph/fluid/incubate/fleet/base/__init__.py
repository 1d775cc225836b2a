"""`fluid.incubate.fleet.base`: role makers."""
