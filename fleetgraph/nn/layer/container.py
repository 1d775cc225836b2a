"""Sequential, LayerList and ParameterList."""

from __future__ import annotations

import collections

from ...ir import FleetgraphError
from .layers import Layer


class Sequential(Layer):
    """Sublayers called in order: `Sequential(l1, l2)` or `Sequential(('name', l1), ...)`."""

    def __init__(self, *layers) -> None:
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (dict, collections.OrderedDict)):
            layers = tuple(layers[0].items())
        for i, item in enumerate(layers):
            name, layer = item if isinstance(item, (tuple, list)) else (str(i), item)
            self.add_sublayer(name, layer)

    def __getitem__(self, index):
        layers = list(self._sub_layers.values())
        if isinstance(index, slice):
            return Sequential(*layers[index])
        return layers[index]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def forward(self, x):
        for layer in self._sub_layers.values():
            x = layer(x)
        return x


class LayerList(Layer):
    def __init__(self, sublayers=None) -> None:
        super().__init__()
        for layer in sublayers or []:
            self.append(layer)

    def append(self, layer: Layer) -> LayerList:
        self.add_sublayer(str(len(self._sub_layers)), layer)
        return self

    def extend(self, layers) -> LayerList:
        for layer in layers:
            self.append(layer)
        return self

    def insert(self, index: int, layer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers.insert(index, layer)
        self._sub_layers.clear()
        for i, item in enumerate(layers):
            self.add_sublayer(str(i), item)

    def __getitem__(self, index):
        layers = list(self._sub_layers.values())
        if isinstance(index, slice):
            return LayerList(layers[index])
        return layers[index]

    def __setitem__(self, index: int, layer: Layer) -> None:
        key = list(self._sub_layers)[index]
        self._sub_layers[key] = layer

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def forward(self, *args):
        raise FleetgraphError("LayerList: has no forward; iterate over it and call its layers")


class ParameterList(Layer):
    def __init__(self, parameters=None) -> None:
        super().__init__()
        for p in parameters or []:
            self.append(p)

    def append(self, parameter) -> ParameterList:
        self.add_parameter(str(len(self._parameters)), parameter)
        return self

    def __getitem__(self, index: int):
        return list(self._parameters.values())[index]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())


__all__ = ["Sequential", "LayerList", "ParameterList"]
