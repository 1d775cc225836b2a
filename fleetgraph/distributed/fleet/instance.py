"""The process's one `Fleet`, in a module of its own so that what the package exports (the metrics
among them) can reach it without importing the package itself."""

from __future__ import annotations

from .base.fleet_base import Fleet

fleet = Fleet()
