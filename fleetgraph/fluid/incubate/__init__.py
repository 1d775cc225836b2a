"""`fluid.incubate`: the Fluid-era home of Fleet (`fluid.incubate.fleet`)."""
