"""`paddle.nn.initializer.xavier`: XavierNormal and XavierUniform (Fluid's Xavier by 2.x names)."""

from __future__ import annotations

from ...initializer import XavierNormal, XavierUniform

__all__ = ["XavierNormal", "XavierUniform"]
