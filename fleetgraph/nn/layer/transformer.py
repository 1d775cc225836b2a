"""`paddle.nn` layer classes: transformer (Paddle 2.0's python/paddle/nn/layer/transformer.py), with
its parameter names and shapes, so that a Paddle 2.0 state dict loads: MultiHeadAttention,
TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder, Transformer."""

from __future__ import annotations

import collections
import copy

import numpy as np

from ...ir import get_default_dtype
from ...layers import math as _math
from ...layers import tensor as _tensor
from ...layers.creation import triu
from ...param_attr import ParamAttr
from .. import functional as F
from .common import Dropout, Linear
from .container import LayerList
from .layers import Layer
from .norm import LayerNorm

__all__ = [
    "MultiHeadAttention",
    "TransformerEncoderLayer",
    "TransformerEncoder",
    "TransformerDecoderLayer",
    "TransformerDecoder",
    "Transformer",
]


def _convert_param_attr_to_list(param_attr, n: int) -> list:
    """One attr per sublayer group: a list of n as given (True: defaults, False: none), or n copies
    of one attr, a named one's copies suffixed _0, _1 ... so that their parameters do not collide."""
    if isinstance(param_attr, (list, tuple)):
        if len(param_attr) != n:
            raise ValueError(f"param_attr: expected {n} attrs in a list or tuple, got {len(param_attr)}")
        return [ParamAttr._to_attr(None if attr is True else attr) for attr in param_attr]
    if isinstance(param_attr, bool):
        return [ParamAttr._to_attr(None) if param_attr else False for _ in range(n)]
    attr = ParamAttr._to_attr(param_attr)
    attrs = []
    for i in range(n):
        attr_i = copy.deepcopy(attr)
        if attr.name:
            attr_i.name = f"{attr.name}_{i}"
        attrs.append(attr_i)
    return attrs


def _heads(x, num_heads: int, head_dim: int):
    """[batch, seq, heads * head_dim] -> [batch, heads, seq, head_dim]."""
    return _tensor.transpose(_tensor.reshape(x, [0, 0, num_heads, head_dim]), [0, 2, 1, 3])


class MultiHeadAttention(Layer):
    """Scaled dot-product attention over num_heads heads of embed_dim / num_heads: q, k and v
    projections, softmax(q k^T / sqrt(head_dim) + attn_mask) (dropped out while training) times v,
    then the out projection. `cache` (a Cache, grown by each step's k and v, or a StaticCache of
    fixed k and v) serves incremental decoding."""

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        kdim=None,
        vdim=None,
        need_weights=False,
        weight_attr=None,
        bias_attr=None,
    ) -> None:
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.need_weights = need_weights
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError(f"MultiHeadAttention: embed_dim {embed_dim} expected divisible by num_heads {num_heads}")
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _prepare_qkv(self, query, key, value, cache=None):
        q = _heads(self.q_proj(query), self.num_heads, self.head_dim)
        if isinstance(cache, self.StaticCache):
            k, v = cache.k, cache.v
        else:
            k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k = _tensor.concat([cache.k, k], axis=2)
            v = _tensor.concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        return (q, k, v) if cache is None else (q, k, v, cache)

    def compute_kv(self, key, value):
        """key and value projected and split into heads: [batch, heads, seq, head_dim] each."""
        k = _heads(self.k_proj(key), self.num_heads, self.head_dim)
        v = _heads(self.v_proj(value), self.num_heads, self.head_dim)
        return k, v

    def gen_cache(self, key, value=None, type=Cache):  # noqa: A002 (Paddle's name)
        """A StaticCache of key's and value's projections; else a Cache of `key` and `value` as
        given, or, without value, an empty one ([batch, heads, 0, head_dim]) to grow."""
        if type == MultiHeadAttention.StaticCache:
            return self.StaticCache(*self.compute_kv(key, value))
        if value is None:
            shape = [-1, self.num_heads, 0, self.head_dim]
            k = _tensor.fill_constant_batch_size_like(key, shape, key.dtype, 0)
            v = _tensor.fill_constant_batch_size_like(key, shape, key.dtype, 0)
            return self.Cache(k, v)
        return self.Cache(key, value)

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        key = query if key is None else key
        value = query if value is None else value
        if cache is None:
            q, k, v = self._prepare_qkv(query, key, value, cache)
        else:
            q, k, v, cache = self._prepare_qkv(query, key, value, cache)
        product = _math.matmul(q, k, transpose_y=True, alpha=self.head_dim**-0.5)
        if attn_mask is not None:
            product = product + attn_mask
        weights = F.softmax(product)
        if self.dropout:
            weights = F.dropout(weights, self.dropout, training=self.training, mode="upscale_in_train")
        out = _tensor.transpose(_math.matmul(weights, v), [0, 2, 1, 3])
        out = self.out_proj(_tensor.reshape(out, [0, 0, out.shape[2] * out.shape[3]]))
        outs = [out]
        if self.need_weights:
            outs.append(weights)
        if cache is not None:
            outs.append(cache)
        return out if len(outs) == 1 else tuple(outs)


def _config(arguments: dict) -> dict:
    """A layer's constructor arguments, from which TransformerEncoder/Decoder build its copies."""
    return {k: v for k, v in arguments.items() if k not in ("self", "__class__")}


class _SublayerBlocks(Layer):
    """What the encoder and decoder layers share: self-attention (and, with three blocks,
    cross-attention), the feed-forward block, a LayerNorm and a dropout per block, built in Paddle's
    order so that the state-dict keys and the parameter names are its."""

    def __init__(
        self,
        blocks,
        d_model,
        nhead,
        dim_feedforward,
        dropout,
        activation,
        attn_dropout,
        act_dropout,
        normalize_before,
        weight_attr,
        bias_attr,
    ) -> None:
        super().__init__()
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        weight_attrs = _convert_param_attr_to_list(weight_attr, blocks)
        bias_attrs = _convert_param_attr_to_list(bias_attr, blocks)
        self.self_attn = MultiHeadAttention(
            d_model, nhead, dropout=attn_dropout, weight_attr=weight_attrs[0], bias_attr=bias_attrs[0]
        )
        if blocks == 3:
            self.cross_attn = MultiHeadAttention(
                d_model, nhead, dropout=attn_dropout, weight_attr=weight_attrs[1], bias_attr=bias_attrs[1]
            )
        self.linear1 = Linear(d_model, dim_feedforward, weight_attrs[-1], bias_attr=bias_attrs[-1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, weight_attrs[-1], bias_attr=bias_attrs[-1])
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout, mode="upscale_in_train"))
        self.activation = getattr(F, activation)

    def _feed_forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_SublayerBlocks):
    """Self-attention then a feed-forward block (linear1, activation, linear2), each with dropout, a
    residual and a LayerNorm after (before, with normalize_before)."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward,
        dropout=0.1,
        activation="relu",
        attn_dropout=None,
        act_dropout=None,
        normalize_before=False,
        weight_attr=None,
        bias_attr=None,
    ) -> None:
        config = _config(locals())
        super().__init__(2, **config)
        self._config = config

    def forward(self, src, src_mask=None):
        residual = src
        if self.normalize_before:
            src = self.norm1(src)
        src = residual + self.dropout1(self.self_attn(src, src, src, src_mask))
        if not self.normalize_before:
            src = self.norm1(src)
        residual = src
        if self.normalize_before:
            src = self.norm2(src)
        src = residual + self.dropout2(self._feed_forward(src))
        if not self.normalize_before:
            src = self.norm2(src)
        return src


def _stack(layer: Layer, num_layers: int) -> LayerList:
    """`layer` and num_layers - 1 fresh layers built from its arguments (their own parameters)."""
    return LayerList([layer if i == 0 else type(layer)(**layer._config) for i in range(num_layers)])


class TransformerEncoder(Layer):
    """num_layers encoder layers (the given one first, then copies of its configuration) and an
    optional final norm."""

    def __init__(self, encoder_layer, num_layers, norm=None) -> None:
        super().__init__()
        self.layers = _stack(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, src_mask=None):
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=src_mask)
        return self.norm(output) if self.norm is not None else output


class TransformerDecoderLayer(_SublayerBlocks):
    """Self-attention, cross-attention over the encoder's memory, then the feed-forward block, each
    with dropout, a residual and a LayerNorm after (before, with normalize_before)."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward,
        dropout=0.1,
        activation="relu",
        attn_dropout=None,
        act_dropout=None,
        normalize_before=False,
        weight_attr=None,
        bias_attr=None,
    ) -> None:
        config = _config(locals())
        super().__init__(3, **config)
        self._config = config

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        residual = tgt
        if self.normalize_before:
            tgt = self.norm1(tgt)
        if cache is None:
            tgt = self.self_attn(tgt, tgt, tgt, tgt_mask, None)
        else:
            tgt, incremental_cache = self.self_attn(tgt, tgt, tgt, tgt_mask, cache[0])
        tgt = residual + self.dropout1(tgt)
        if not self.normalize_before:
            tgt = self.norm1(tgt)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm2(tgt)
        if cache is None:
            tgt = self.cross_attn(tgt, memory, memory, memory_mask, None)
        else:
            tgt, static_cache = self.cross_attn(tgt, memory, memory, memory_mask, cache[1])
        tgt = residual + self.dropout2(tgt)
        if not self.normalize_before:
            tgt = self.norm2(tgt)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm3(tgt)
        tgt = residual + self.dropout3(self._feed_forward(tgt))
        if not self.normalize_before:
            tgt = self.norm3(tgt)
        return tgt if cache is None else (tgt, (incremental_cache, static_cache))

    def gen_cache(self, memory):
        """(an empty self-attention Cache, the cross-attention's StaticCache of memory)."""
        incremental_cache = self.self_attn.gen_cache(memory, type=self.self_attn.Cache)
        static_cache = self.cross_attn.gen_cache(memory, memory, type=self.cross_attn.StaticCache)
        return incremental_cache, static_cache


class TransformerDecoder(Layer):
    """num_layers decoder layers (the given one first, then copies of its configuration) and an
    optional final norm; with `cache` (one per layer, from gen_cache) it also returns the new caches."""

    def __init__(self, decoder_layer, num_layers, norm=None) -> None:
        super().__init__()
        self.layers = _stack(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        output = tgt
        new_caches = []
        for i, mod in enumerate(self.layers):
            if cache is None:
                output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, cache=None)
            else:
                output, new_cache = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, cache=cache[i])
                new_caches.append(new_cache)
        if self.norm is not None:
            output = self.norm(output)
        return output if cache is None else (output, new_caches)

    def gen_cache(self, memory, do_zip=False):
        """Each layer's caches; do_zip regroups them as (incremental caches, static caches)."""
        cache = [layer.gen_cache(memory) for layer in self.layers]
        return list(zip(*cache)) if do_zip else cache


def _split_attrs(attr, where: str) -> tuple:
    """Transformer's weight_attr or bias_attr as (the encoder's, the decoder's): a list of 1, 2 or 3
    shares them out as Paddle's (attention, [cross-attention,] feed-forward)."""
    if not isinstance(attr, (list, tuple)):
        return attr, attr
    if len(attr) == 1:
        return [attr[0]] * 2, [attr[0]] * 3
    if len(attr) == 2:
        return attr, [attr[0], attr[0], attr[-1]]
    if len(attr) == 3:
        return [attr[0], attr[-1]], attr
    raise ValueError(f"Transformer: {where} expected 1, 2 or 3 attrs in a list or tuple, got {len(attr)}")


class Transformer(Layer):
    """An encoder of num_encoder_layers and a decoder of num_decoder_layers, each ending in a
    LayerNorm (or the custom ones given)."""

    def __init__(
        self,
        d_model=512,
        nhead=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        attn_dropout=None,
        act_dropout=None,
        normalize_before=False,
        weight_attr=None,
        bias_attr=None,
        custom_encoder=None,
        custom_decoder=None,
    ) -> None:
        super().__init__()
        encoder_bias_attr, decoder_bias_attr = _split_attrs(bias_attr, "bias_attr")
        encoder_weight_attr, decoder_weight_attr = _split_attrs(weight_attr, "weight_attr")
        common = (d_model, nhead, dim_feedforward, dropout, activation, attn_dropout, act_dropout, normalize_before)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(*common, encoder_weight_attr, encoder_bias_attr)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(*common, decoder_weight_attr, decoder_bias_attr)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model))
        self.d_model = d_model
        self.nhead = nhead

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        memory = self.encoder(src, src_mask=src_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    def generate_square_subsequent_mask(self, length):
        """[length, length] of -inf above the diagonal, 0 elsewhere (each position sees only the earlier)."""
        return triu(_tensor.fill_constant([length, length], get_default_dtype(), -np.inf), 1)
