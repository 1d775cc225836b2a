"""Mixed precision in the dispatch: inside an auto_cast region (`mode.amp_region`) every eager op's
floating inputs are cast, by cast ops recorded on the tape, to the dtype its policy gives the op
before its kernel runs (Paddle's tracer, AutoCastInputs). Gradients then flow back through those
casts, so float32 parameters receive float32 gradients.

Steps of `AmpPolicy.cast_inputs` for one op (not a cast, nor an optimizer's update, which writes
into its inputs and so runs on them as they are):
  1. the dtype it computes in: O1 gives white-list ops the low dtype, black-list ops float32 and
     any other op float32 when an input is float32, else the low dtype (Paddle's promotion);
     O2 gives every op but the black-list ones the low dtype;
  2. cast each float32 or low-precision input of another dtype to it (float64 stays; of the norm
     ops only X goes low, their scale, bias and statistics stay float32, as Paddle's);
  3. say whether the kernel computes in the low dtype (engine.run_op then runs it through
     ops.bound.in_float32).
"""

from __future__ import annotations

import contextlib

from . import engine, mode

_CASTABLE = ("float32", "bfloat16")  # Paddle's NeedCast: float32 and the low dtypes, never float64
_X_ONLY = frozenset({"batch_norm", "sync_batch_norm", "layer_norm", "instance_norm"})


class AmpPolicy:
    """One auto_cast region's choice: the level ('O1', 'O2'), the low dtype and the op lists."""

    __slots__ = ("level", "low", "white", "black")

    def __init__(self, level: str, low: str, white, black) -> None:
        self.level, self.low = level, low
        self.white, self.black = frozenset(white), frozenset(black)

    def dtype_of(self, op_type: str, dtypes: list[str]) -> str:
        """Step 1: the dtype op `op_type` computes in, given its castable inputs' dtypes."""
        if op_type in self.black:
            return "float32"
        if self.level == "O2" or op_type in self.white:
            return self.low
        return "float32" if "float32" in dtypes else self.low

    def cast_inputs(self, s, inputs: dict) -> tuple[dict, bool]:
        """`inputs` (slot -> Tensors) with the casts of steps 1-2 made, and step 3's answer."""
        if s.type == "cast" or (s.inplace_ins and s.type not in _X_ONLY):
            return inputs, False  # a cast converts as it is told; an update (sgd, adam) writes into its inputs
        dtypes = [t.dtype for ts in inputs.values() for t in ts if t is not None and t.value is not None]
        dtypes = [d for d in dtypes if d in _CASTABLE]
        if not dtypes:
            return inputs, False
        target = self.dtype_of(s.type, dtypes)
        cast = {}
        for slot, ts in inputs.items():
            if s.type in _X_ONLY and slot != "X" and target != "float32":
                cast[slot] = ts
            else:
                cast[slot] = [_cast(t, target) for t in ts]
        return cast, target == self.low


def _cast(t, dtype: str):
    """`t` as `dtype` by a cast op on the tape (`t` itself when it is not floating or already is)."""
    if t is None or t.value is None or t.dtype == dtype or t.dtype not in _CASTABLE:
        return t
    out = engine.Tensor()
    engine.run_op("cast", {"X": [t]}, {"Out": [out]}, {"in_dtype": t.dtype, "out_dtype": dtype})
    return out


@contextlib.contextmanager
def policy_guard(policy: AmpPolicy | None):
    """Eager ops follow `policy` (None: no casting) until the block ends."""
    if policy is not None and policy.low == "bfloat16" and mode.array_module().__name__ != "numpy":
        raise RuntimeError(
            "auto_cast(dtype='bfloat16'): bfloat16 runs on the CPU place (NumPy with ml_dtypes); the current "
            f"place computes with {mode.array_module().__name__}, which has no bfloat16"
        )
    region = mode.amp_region
    saved, region.policy = region.policy, policy
    try:
        yield
    finally:
        region.policy = saved
