"""`fluid.incubate.fleet.parameter_server`: Fleet in parameter-server mode."""
