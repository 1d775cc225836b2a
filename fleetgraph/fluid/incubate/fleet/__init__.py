"""`fluid.incubate.fleet`: the Fluid-era import paths of the one Fleet in `fleetgraph.distributed.fleet`."""
