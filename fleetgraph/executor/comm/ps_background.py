"""A trainer's background threads: the half-async sender, which adds up pending values, and the async receiver."""

from __future__ import annotations

import logging
import queue
import threading

import numpy as np

from ...ir import FleetgraphError
from ...ops.selected_rows import SelectedRows, merge_dense
from .config import CommTimeout, rpc_timeout
from .ps_connections import Connections, Traffic, get_all
from .wire import Kind

log = logging.getLogger("fleetgraph.comm")


class Merger(threading.Thread):
    """Half-async sending: pending values of one variable are added up and sent as one."""

    def __init__(self, context, sender: int, traffic: Traffic) -> None:
        super().__init__(name="fleetgraph-half-async-sender", daemon=True)
        self.connections = Connections(context, traffic)
        self.sender = sender
        self.inbox: queue.Queue = queue.Queue()
        self.error: BaseException | None = None

    def push(self, endpoint: str, name: str, value) -> None:
        if self.error is not None:
            raise FleetgraphError(f"half-async sender failed: {self.error}") from self.error
        self.inbox.put((endpoint, name, value))

    def run(self) -> None:
        try:
            while True:
                batch = [self.inbox.get()]
                while not self.inbox.empty():
                    batch.append(self.inbox.get_nowait())
                stop = any(item is None for item in batch)
                merged: dict[tuple[str, str], list] = {}
                for item in batch:
                    if item is not None:
                        merged.setdefault(item[:2], []).append(item[2])
                items = [(ep, Kind.SEND, name, add_up(values)) for (ep, name), values in merged.items()]
                if items:
                    self.connections.request("send", items, self.sender)
                if stop:
                    return
        except BaseException as e:  # reported to the trainer on its next push or at flush
            self.error = e
            log.error("half-async sender: %s", e)
        finally:
            self.connections.close()

    def flush_and_stop(self) -> None:
        self.inbox.put(None)
        self.join(rpc_timeout())
        if self.error is not None:
            raise FleetgraphError(f"half-async sender failed: {self.error}") from self.error


class Puller(threading.Thread):
    """Async receiving, shared by a trainer's threads: a step reads values from a pull that started
    after that thread's last send (so it sees its own updates as a step of its own would), and every
    thread waiting then is served by the same pull: one stream of parameter fetches per trainer,
    however many threads train. The values are read-only arrays, replaced whole."""

    def __init__(self, context, sender: int, traffic: Traffic) -> None:
        super().__init__(name="fleetgraph-async-receiver", daemon=True)
        self.connections = Connections(context, traffic)
        self.sender = sender
        self.wanted: dict[str, str] = {}  # variable -> pserver
        self.latest: dict[str, np.ndarray] = {}
        self.started = self.done = 0  # pulls begun and finished
        self.asked = 0  # the pull some thread waits for
        self.cond = threading.Condition()
        self.stopping = False
        self.error: BaseException | None = None
        self._local = threading.local()

    def sent(self) -> None:
        """This thread sent: its next read waits for a pull that starts after now."""
        with self.cond:
            self._local.after = self.started + 1

    def values(self, names: list[str], epmap: list[str]) -> list[np.ndarray]:
        with self.cond:
            self.wanted.update(zip(names, epmap))
            need = getattr(self._local, "after", 1) if all(n in self.latest for n in names) else self.started + 1
            if self.done < need:
                self.asked = max(self.asked, need)
                self.cond.notify_all()
                deadline = rpc_timeout()
                if not self.cond.wait_for(lambda: self.done >= need or self.error is not None, deadline):
                    raise CommTimeout(
                        f"recv {names[0]!r}: no parameters pulled after {deadline} s (FLEETGRAPH_RPC_TIMEOUT)"
                    )
            if self.error is not None:
                raise FleetgraphError(f"async receiver failed: {self.error}") from self.error
            return [self.latest[n] for n in names]

    def run(self) -> None:
        try:
            while True:
                with self.cond:
                    self.cond.wait_for(lambda: self.stopping or self.asked > self.done)
                    if self.stopping:
                        return
                    self.started += 1
                    pull, wanted = self.started, list(self.wanted.items())
                names, epmap = [n for n, _ in wanted], [ep for _, ep in wanted]
                values = get_all(self.connections, names, epmap, self.sender)
                with self.cond:
                    self.latest.update(zip(names, values))
                    self.done = pull
                    self.cond.notify_all()
        except BaseException as e:  # reported to every waiting and later recv
            with self.cond:
                self.error = e
                self.cond.notify_all()
            log.error("async receiver: %s", e)
        finally:
            self.connections.close()

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        self.join(rpc_timeout())


def add_up(values):
    return compact(values[0] if len(values) == 1 else merge_dense(np, values))


def compact(value):
    """What goes on the wire: a sparse gradient with each row once (a batch looks an id up as often
    as it occurs; its row travels once, the sum of its gradients), anything else as it is."""
    return value.merged(np) if isinstance(value, SelectedRows) else value
