"""GEO training on a trainer: every k local steps, push each parameter's change and pull the merged value back."""

from __future__ import annotations

import numpy as np

from ...ir import FleetgraphError
from ...ops.selected_rows import SelectedRows
from ...ops.sparse_table import SparseTable
from .wire import Kind


class GeoParam:
    """A GEO parameter: its array (updated in place by the local optimizer) and the last values
    the pservers gave for each of its blocks."""

    def __init__(self, array: np.ndarray, blocks: list[tuple[str, str, slice]], epmap: list[str]) -> None:
        self.array, self.blocks, self.epmap, self.steps = array, blocks, epmap, 0


class GeoTable:
    """A GEO trainer's copy of a table on the pservers (a SparseTable), the rows' values when last
    pulled (the base of their deltas; a row never pulled has its initial value; its rows sit where
    the table's do, under the table's index), and the ids touched since the last push."""

    def __init__(self, table: SparseTable, names: list[str], epmap: list[str], sections: list[int]) -> None:
        self.table, self.names, self.epmap, self.sections = table, names, epmap, sections
        self.base = SparseTable(table.height, table.width, table.dtype, table.init, table.offset)
        self.base.follow(table)
        self.touched: list[np.ndarray] = []
        self.steps = 0


class GeoSteps:
    """The GEO steps of `ps_client.PSClient`, which supplies `geo` (name -> GeoParam or GeoTable),
    `received`, `_lock`, `_note`, `connections`, `recv`, `prefetch` and `trainer_id`."""

    def geo_step(
        self,
        name: str,
        param: np.ndarray,
        epmap: list[str],
        sections: list[int],
        delta_names: list[str],
        k_steps: int,
        trainer_id: int,
    ) -> None:
        """Count a local step; every k_steps push each block's change since the last pull and pull
        the pservers' merged blocks back into the parameter."""
        self._note(epmap, trainer_id)
        with self._lock:
            state = self.geo.get(name)
            if state is None:
                state = self.geo[name] = self._geo_param(name, param, epmap, sections, delta_names)
            state.array = param
            state.steps += 1
            if state.steps % k_steps == 0:
                self._geo_sync(state, pull=True)

    def _geo_param(self, name, param, epmap, sections, delta_names) -> GeoParam:
        bounds = np.cumsum([0] + list(sections))
        blocks = [(d, d[: -len(".delta")], slice(bounds[i], bounds[i + 1])) for i, d in enumerate(delta_names)]
        for _, block, _ in blocks:
            if block not in self.received:
                raise FleetgraphError(
                    f"GEO send {name!r}: block {block!r} was never received from the pservers; "
                    "run the trainer's startup program first"
                )
        return GeoParam(param, blocks, list(epmap))

    def geo_table_step(
        self,
        name: str,
        table: SparseTable,
        touched: SelectedRows,
        epmap: list[str],
        sections: list[int],
        delta_names: list[str],
        k_steps: int,
        trainer_id: int,
    ) -> None:
        """GEO for a table on the pservers: note the rows this step touched; every k_steps push the
        change of the rows touched since the last push (as sparse rows) and pull those rows back."""
        self._note(epmap, trainer_id)
        with self._lock:
            state = self.geo.get(name)
            if state is None:
                state = self.geo[name] = GeoTable(table, delta_names, list(epmap), list(sections))
            state.touched.append(np.asarray(touched.rows))
            state.steps += 1
            if state.steps % k_steps == 0:
                self._geo_sync(state, pull=True)

    def _geo_sync(self, state: GeoParam | GeoTable, pull: bool) -> None:
        if isinstance(state, GeoTable):
            self._geo_sync_table(state, pull)
            return
        deltas = [state.array[rows] - self.received[block] for _, block, rows in state.blocks]
        self.connections.request(
            "send",
            [(ep, Kind.SEND, d, delta) for (d, _, _), delta, ep in zip(state.blocks, deltas, state.epmap)],
            self.trainer_id,
        )
        if pull:
            fresh = self.recv([block for _, block, _ in state.blocks], state.epmap, self.trainer_id, keep_base=True)
            for (_, _, rows), value in zip(state.blocks, fresh):
                state.array[rows] = value
        state.steps = 0

    def _geo_sync_table(self, state: GeoTable, pull: bool) -> None:
        ids = np.unique(np.concatenate(state.touched))
        state.touched, state.steps = [], 0
        positions = state.table.positions(ids)
        state.base.follow(state.table)  # rows the table created since
        delta = state.table.values[positions] - state.base.values[positions]
        bounds = np.cumsum([0, *state.sections])
        cuts = np.searchsorted(ids, bounds)
        items = [
            (ep, Kind.SEND, name, SelectedRows(ids[lo:hi] - bounds[i], delta[lo:hi], state.sections[i]))
            for i, (name, ep, lo, hi) in enumerate(zip(state.names, state.epmap, cuts[:-1], cuts[1:]))
            if hi > lo
        ]
        self.connections.request("send", items, self.trainer_id)
        if pull:
            blocks = [d[: -len(".delta")] for d in state.names]
            fresh = self.prefetch(
                blocks, state.epmap, state.sections, ids, self.trainer_id, delta.shape[1], delta.dtype
            )
            state.table.write(positions, fresh)
            state.base.write(positions, fresh)
