"""What the job benches share: free endpoints on 127.0.0.1 and a process's resident memory."""

from __future__ import annotations

import socket


def endpoints(n: int) -> list[str]:
    """n distinct 127.0.0.1:port endpoints free right now."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [f"127.0.0.1:{s.getsockname()[1]}" for s in socks]
    finally:
        for s in socks:
            s.close()


def rss_mb(pid: int) -> float:
    """Resident memory of a running process, in MB."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
