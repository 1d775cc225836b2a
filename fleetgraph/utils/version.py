"""`require_version`: a script states the Paddle API version it was written for."""

from __future__ import annotations

import re

# The Paddle release whose API fleetgraph follows (it also keeps Fluid 1.8's spellings).
PADDLE_API_VERSION = "2.0.0"

_FORMAT = re.compile(r"\d+(\.\d+){0,3}")


def _parts(version: str) -> list[int]:
    return [int(p) for p in version.split(".")] + [0] * (4 - len(version.split(".")))


def require_version(min_version, max_version=None) -> None:
    """Raise unless the Paddle API version fleetgraph follows (`PADDLE_API_VERSION`) is in
    [min_version, max_version], with Paddle's argument checks and messages."""
    if not isinstance(min_version, str):
        raise TypeError(f"The type of 'min_version' in require_version must be str, but received {type(min_version)}.")
    if not isinstance(max_version, (str, type(None))):
        raise TypeError(
            f"The type of 'max_version' in require_version must be str or type(None), but received {type(max_version)}."
        )
    for label, version in (("min_version", min_version), ("max_version", max_version)):
        if version is not None and not _FORMAT.fullmatch(version):
            raise ValueError(
                f"The value of '{label}' in require_version must be in format '\\d+(\\.\\d+){{0,3}}', "
                f"like '1.5.2.0', but received {version}"
            )
    installed = _parts(PADDLE_API_VERSION)
    too_old = installed < _parts(min_version)
    too_new = max_version is not None and installed > _parts(max_version)
    if too_old or too_new:
        wanted = f"in [{min_version}, {max_version}]" if max_version is not None else f">= {min_version}"
        raise Exception(
            f"VersionError: PaddlePaddle version {wanted} required, but fleetgraph follows the API of "
            f"PaddlePaddle {PADDLE_API_VERSION}."
        )
