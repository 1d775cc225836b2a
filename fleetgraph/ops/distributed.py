"""Parameter-server ops: send, recv, barriers, listen_and_serv, and the splits that cut variables
into blocks."""

from __future__ import annotations
