"""`paddle.nn.initializer.kaiming`: KaimingNormal and KaimingUniform (Fluid's MSRA by 2.x names)."""

from __future__ import annotations

from ...initializer import KaimingNormal, KaimingUniform

__all__ = ["KaimingNormal", "KaimingUniform"]
