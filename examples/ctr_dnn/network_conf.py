"""The CTR-DNN of seed 000: 26 sparse slots embedded in one table and sum-pooled per sample, the 13
dense features beside them, three ReLU layers of 400, a softmax over click / no click."""

import math

import fleetgraph as paddle


def _batched(var, width):
    """Seed 000 declares its inputs without the batch dimension (shape [13], [1]): rows as batches come."""
    return paddle.reshape(var, [-1, width])


def ctr_dnn_model_dataset(dense_input, sparse_inputs, label, embedding_size, sparse_feature_dim):
    def embedding_layer(ids):
        emb = paddle.fluid.layers.embedding(
            input=ids,
            is_sparse=True,
            size=[sparse_feature_dim, embedding_size],
            param_attr=paddle.ParamAttr(name="SparseFeatFactors", initializer=paddle.nn.initializer.Uniform(-0.1, 0.1)),
        )
        return _batched(paddle.static.nn.sequence_pool(input=emb, pool_type="sum"), embedding_size)

    sparse_embed_seq = [embedding_layer(ids) for ids in sparse_inputs]
    concated = paddle.concat(sparse_embed_seq + [_batched(dense_input, dense_input.shape[-1])], axis=1)
    hidden = concated
    for size, act in ((400, "relu"), (400, "relu"), (400, "relu"), (2, "softmax")):
        init = paddle.nn.initializer.Normal(std=1 / math.sqrt(hidden.shape[1]))
        hidden = paddle.static.nn.fc(hidden, size=size, activation=act, weight_attr=paddle.ParamAttr(initializer=init))
    predict = hidden
    label = _batched(label, 1)
    cost = paddle.nn.functional.cross_entropy(input=predict, label=label, reduction="none", use_softmax=False)
    avg_cost = paddle.sum(cost)
    auc_var, batch_auc_var, _ = paddle.static.auc(input=predict, label=label, num_thresholds=2**12, slide_steps=20)
    return avg_cost, auc_var, batch_auc_var
