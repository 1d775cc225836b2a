"""`fluid.data_feeder`: DataFeeder and the check_* argument validators."""

__all__: list[str] = []
