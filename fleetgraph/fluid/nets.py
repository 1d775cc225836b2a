"""`fluid.nets`: small networks composed of layer functions, with Paddle 1.8.5's signatures."""

from __future__ import annotations

from .. import layers


def simple_img_conv_pool(
    input,
    num_filters,
    filter_size,
    pool_size,
    pool_stride,
    pool_padding=0,
    pool_type="max",
    global_pooling=False,
    conv_stride=1,
    conv_padding=0,
    conv_dilation=1,
    conv_groups=1,
    param_attr=None,
    bias_attr=None,
    act=None,
    use_cudnn=True,
):
    """A conv2d (with `act`) followed by a pool2d: the convolution block of LeNet-style models."""
    conv_out = layers.conv2d(
        input=input,
        num_filters=num_filters,
        filter_size=filter_size,
        stride=conv_stride,
        padding=conv_padding,
        dilation=conv_dilation,
        groups=conv_groups,
        param_attr=param_attr,
        bias_attr=bias_attr,
        act=act,
        use_cudnn=use_cudnn,
    )
    return layers.pool2d(
        input=conv_out,
        pool_size=pool_size,
        pool_type=pool_type,
        pool_stride=pool_stride,
        pool_padding=pool_padding,
        global_pooling=global_pooling,
        use_cudnn=use_cudnn,
    )


def glu(input, dim=-1):
    """The gated linear unit: `input` split in two halves along `dim`, a * sigmoid(b)."""
    a, b = layers.split(input, num_or_sections=2, dim=dim)
    return layers.elementwise_mul(a, layers.sigmoid(b))


def scaled_dot_product_attention(queries, keys, values, num_heads=1, dropout_rate=0.0):
    """softmax(Q K^T / sqrt(d)) V over 3-D [batch, length, hidden] inputs; with several heads Q, K
    and V are first projected by an fc each and split into heads along the hidden axis, and the
    heads' contexts are joined back."""
    if not len(queries.shape) == len(keys.shape) == len(values.shape) == 3:
        raise ValueError("scaled_dot_product_attention: queries, keys and values must all be 3-D")
    if queries.shape[-1] != keys.shape[-1] or keys.shape[-2] != values.shape[-2]:
        raise ValueError(
            "scaled_dot_product_attention: queries and keys need one hidden size, keys and values one length"
        )
    if keys.shape[-1] % num_heads or values.shape[-1] % num_heads:
        raise ValueError(f"scaled_dot_product_attention: hidden sizes must divide by num_heads ({num_heads})")
    if num_heads > 1:
        queries, keys, values = (layers.fc(t, size=t.shape[-1], num_flatten_dims=2) for t in (queries, keys, values))
    q, k, v = (_split_heads(t, num_heads) for t in (queries, keys, values))
    scaled_q = layers.scale(q, scale=(keys.shape[-1] // num_heads) ** -0.5)
    weights = layers.softmax(layers.matmul(scaled_q, k, transpose_y=True))
    if dropout_rate:
        weights = layers.dropout(weights, dropout_prob=dropout_rate, is_test=False)
    context = layers.matmul(weights, v)
    if num_heads == 1:
        return context
    joined = layers.transpose(context, perm=[0, 2, 1, 3])
    return layers.reshape(joined, shape=[0, 0, joined.shape[2] * joined.shape[3]])


def _split_heads(x, num_heads):
    """[batch, length, hidden] as [batch, heads, length, hidden / heads]."""
    if num_heads == 1:
        return x
    hidden = x.shape[-1]
    return layers.transpose(layers.reshape(x, shape=[0, 0, num_heads, hidden // num_heads]), perm=[0, 2, 1, 3])


def sequence_conv_pool(
    input, num_filters, filter_size, param_attr=None, act="sigmoid", pool_type="max", bias_attr=None
):
    """sequence_conv (with `act`) over each sequence, then sequence_pool (`pool_type`): one row a sequence."""
    conv_out = layers.sequence_conv(
        input=input,
        num_filters=num_filters,
        filter_size=filter_size,
        param_attr=param_attr,
        bias_attr=bias_attr,
        act=act,
    )
    return layers.sequence_pool(input=conv_out, pool_type=pool_type)


def img_conv_group(
    input,
    conv_num_filter,
    pool_size,
    conv_padding=1,
    conv_filter_size=3,
    conv_act=None,
    param_attr=None,
    conv_with_batchnorm=False,
    conv_batchnorm_drop_rate=0.0,
    pool_stride=1,
    pool_type="max",
    use_cudnn=True,
):
    """VGG's block: one conv2d per entry of conv_num_filter (each optionally followed by batch_norm
    carrying the activation, and dropout), then one pool2d. A per-conv argument may be one value
    for all or a list as long as conv_num_filter."""
    if not isinstance(conv_num_filter, (list, tuple)):
        raise TypeError(
            f"img_conv_group: conv_num_filter must be a list or tuple, got {type(conv_num_filter).__name__}"
        )

    def per_conv(value, what):
        if not hasattr(value, "__len__"):
            return [value] * len(conv_num_filter)
        if len(value) != len(conv_num_filter):
            raise ValueError(f"img_conv_group: {what} has {len(value)} entries for {len(conv_num_filter)} convolutions")
        return value

    padding, size = per_conv(conv_padding, "conv_padding"), per_conv(conv_filter_size, "conv_filter_size")
    attrs, with_bn = per_conv(param_attr, "param_attr"), per_conv(conv_with_batchnorm, "conv_with_batchnorm")
    drop = per_conv(conv_batchnorm_drop_rate, "conv_batchnorm_drop_rate")
    tmp = input
    for i, filters in enumerate(conv_num_filter):
        tmp = layers.conv2d(
            input=tmp,
            num_filters=filters,
            filter_size=size[i],
            padding=padding[i],
            param_attr=attrs[i],
            act=None if with_bn[i] else conv_act,
            use_cudnn=use_cudnn,
        )
        if with_bn[i]:
            tmp = layers.batch_norm(input=tmp, act=conv_act)
            if abs(drop[i]) > 1e-5:
                tmp = layers.dropout(x=tmp, dropout_prob=drop[i])
    return layers.pool2d(
        input=tmp, pool_size=pool_size, pool_type=pool_type, pool_stride=pool_stride, use_cudnn=use_cudnn
    )
