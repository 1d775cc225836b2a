"""Several "hosts" on one machine for multi-host tests: network namespaces, each with its own
loopback and one address on a shared bridge (10.77.N.1/24 style addresses, host i at .i+1), built
with iproute2 and removed afterwards. Needs root; `available()` says whether this machine can.

Faults: `partition(host)` takes a host's link down; `FaultProxy` is a
small TCP relay run in a host's namespace that delays or resets what passes through it (this
machine's kernel has no `tc netem`), put between trainers and a pserver by giving the trainers the
proxy's endpoint.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))


def available() -> str | None:
    """None when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    probe = f"fgprobe{os.getpid()}"
    try:
        subprocess.run(["ip", "netns", "add", probe], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return f"cannot create a network namespace: {e}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)
    return None


@dataclass
class Host:
    name: str  # its namespace
    ip: str
    veth: str  # its link's end on the bridge, in the switch namespace

    @property
    def prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]


class Cluster:
    """`with Cluster(4) as hosts:` four hosts joined by a bridge in a switch namespace."""

    def __init__(self, count: int) -> None:
        tag = uuid.uuid4().hex[:6]
        self.switch = f"fgsw{tag}"
        self.subnet = f"10.{77 + os.getpid() % 100}.{int(tag[:2], 16)}"
        self.hosts = [Host(f"fgh{tag}{i}", f"{self.subnet}.{i + 1}", f"fgb{tag}{i}") for i in range(count)]

    def __enter__(self) -> list[Host]:
        try:
            _ip("netns", "add", self.switch)
            _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.switch, "link", "set", "br0", "up")
            for host in self.hosts:
                _ip("netns", "add", host.name)
                _ip("-n", host.name, "link", "set", "lo", "up")
                _ip("link", "add", "eth0", "netns", host.name, "type", "veth", "peer", "name", host.veth,
                    "netns", self.switch)  # fmt: skip
                _ip("-n", host.name, "addr", "add", f"{host.ip}/24", "dev", "eth0")
                _ip("-n", host.name, "link", "set", "eth0", "up")
                _ip("-n", self.switch, "link", "set", host.veth, "master", "br0")
                _ip("-n", self.switch, "link", "set", host.veth, "up")
        except BaseException:
            self.__exit__()
            raise
        return self.hosts

    def __exit__(self, *exc) -> None:
        for name in [h.name for h in self.hosts] + [self.switch]:
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)

    def partition(self, host: Host) -> None:
        _ip("-n", self.switch, "link", "set", host.veth, "down")


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    if done.returncode:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def proxied(hosts: list[Host], port: int, target_port: int, **faults):
    """A FaultProxy on each host from `port` to `target_port` (its own pserver), as one context;
    yields the proxies' endpoints."""
    import contextlib

    @contextlib.contextmanager
    def proxies():
        with contextlib.ExitStack() as stack:
            for h in hosts:
                stack.enter_context(FaultProxy(h, f"{h.ip}:{port}", f"{h.ip}:{target_port}", **faults))
            yield [f"{h.ip}:{port}" for h in hosts]

    return proxies()


class FaultProxy:
    """A TCP relay from `listen` to `target` in `host`'s namespace: each chunk waits `delay_s`;
    with `reset_after` bytes, a connection is reset once that many have passed (each direction)."""

    def __init__(self, host: Host, listen: str, target: str, delay_s: float = 0.0, reset_after: int = 0):
        self.args = [os.path.join(HERE, "netns.py"), "proxy", listen, target, str(delay_s), str(reset_after)]
        self.host = host
        self.popen: subprocess.Popen | None = None

    def __enter__(self) -> FaultProxy:
        self.popen = subprocess.Popen(
            [*self.host.prefix, sys.executable, *self.args], stdout=subprocess.PIPE, text=True
        )
        assert self.popen.stdout.readline().strip() == "listening", "the proxy did not start"
        return self

    def __exit__(self, *exc) -> None:
        self.popen.kill()
        self.popen.wait(timeout=10)


def _serve_proxy(listen: str, target: str, delay_s: float, reset_after: int) -> None:
    import asyncio
    import socket
    import struct

    async def pipe(reader, writer, budget):
        sent = 0
        try:
            while data := await reader.read(65536):
                if delay_s:
                    await asyncio.sleep(delay_s)
                writer.write(data)
                await writer.drain()
                sent += len(data)
                if reset_after and sent >= budget:
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    break
        except (ConnectionError, OSError):
            pass
        writer.close()

    async def handle(client_reader, client_writer):
        host, port = target.rsplit(":", 1)
        try:
            server_reader, server_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            pipe(client_reader, server_writer, reset_after), pipe(server_reader, client_writer, reset_after)
        )

    async def main():
        host, port = listen.rsplit(":", 1)
        server = await asyncio.start_server(handle, host, int(port))
        print("listening", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


if __name__ == "__main__" and sys.argv[1:2] == ["proxy"]:
    _serve_proxy(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]))
