"""Fleet's parts: the Fleet class, role makers, the strategy and its translation to the transpiler."""
