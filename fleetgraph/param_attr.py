"""ParamAttr: how a layer names, initializes, regularizes and trains its parameter."""

from __future__ import annotations


class ParamAttr:
    def __init__(
        self,
        name=None,
        initializer=None,
        learning_rate=1.0,
        regularizer=None,
        trainable=True,
        do_model_average=True,
        need_clip=True,
    ) -> None:
        self.name = name
        self.initializer = initializer
        self.learning_rate = learning_rate
        self.regularizer = regularizer
        self.trainable = trainable
        self.need_clip = need_clip

    @staticmethod
    def _to_attr(arg) -> ParamAttr | bool:
        """None -> defaults; False -> no parameter (e.g. no bias); a name or initializer -> wrapped."""
        if arg is None or arg is True:
            return ParamAttr()
        if arg is False:
            return False
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if callable(getattr(arg, "append_init_op", None)):
            return ParamAttr(initializer=arg)
        if hasattr(arg, "append_regularization_ops"):
            return ParamAttr(regularizer=arg)
        raise TypeError(f"param_attr: expected ParamAttr, a name, an initializer or False, got {arg!r}")


class WeightNormParamAttr(ParamAttr):
    """A weight reparameterized as w = g * v / ||v|| (Salimans & Kingma): the layer trains g and v,
    named `<name>_g` and `<name>_v`, the norm taken over every axis but `dim` (over all with None);
    v starts from the initializer and g from v's norm, so w starts as the initializer's value.
    Static programs only, as Paddle 1.8's."""

    def __init__(
        self,
        dim=None,
        name=None,
        initializer=None,
        learning_rate=1.0,
        regularizer=None,
        trainable=True,
        do_model_average=False,
        need_clip=True,
    ) -> None:
        super().__init__(name, initializer, learning_rate, regularizer, trainable, do_model_average, need_clip)
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
            raise TypeError(f"WeightNormParamAttr: dim; expected an int or None, got {dim!r}")
        self.dim = dim
