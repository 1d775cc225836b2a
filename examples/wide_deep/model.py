"""Wide & deep for seed 002's parameter-server quick start, in the static graph's functions: a wide
linear part on the 13 dense features, a deep part on the 26 sparse slots' embeddings (one table, kept
on the pservers in parameter-server training) and the dense features, their sum through a sigmoid;
log loss, and accuracy and auc metrics; the inputs come from a non-iterable DataLoader."""

import math

import fleetgraph as paddle


class WideDeepModel:
    def __init__(
        self,
        sparse_feature_number=1000001,
        sparse_inputs_slots=27,
        sparse_feature_dim=10,
        dense_input_dim=13,
        fc_sizes=(400, 400, 400),
    ):
        self.sparse_feature_number = sparse_feature_number
        self.sparse_inputs_slots = sparse_inputs_slots
        self.sparse_feature_dim = sparse_feature_dim
        self.dense_input_dim = dense_input_dim
        self.fc_sizes = list(fc_sizes)
        self._metrics = {}

    def net(self, is_train=True):
        dense_input = paddle.static.data(name="dense_input", shape=[None, self.dense_input_dim], dtype="float32")
        sparse_inputs = [
            paddle.static.data(name="C" + str(i), shape=[None, 1], lod_level=1, dtype="int64")
            for i in range(1, self.sparse_inputs_slots)
        ]
        label_input = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        self.inputs = [dense_input] + sparse_inputs + [label_input]
        self.loader = paddle.io.DataLoader.from_generator(feed_list=self.inputs, capacity=64, iterable=False)

        pred = self._forward(sparse_inputs, dense_input)
        predict_2d = paddle.concat(x=[1 - pred, pred], axis=1)
        label_float = paddle.cast(label_input, dtype="float32")
        auc, batch_auc, [batch_stat_pos, batch_stat_neg, stat_pos, stat_neg] = paddle.static.auc(
            input=predict_2d, label=label_input, num_thresholds=2**12, slide_steps=20
        )
        state = {"stat_pos": stat_pos, "stat_neg": stat_neg}
        self._metrics["auc"] = {"result": auc, "batch": batch_auc, "state": state}
        self._metrics["acc"] = {"result": paddle.static.accuracy(input=predict_2d, label=label_input)}
        cost = paddle.nn.functional.log_loss(input=pred, label=label_float)
        self.cost = self.loss = paddle.mean(x=cost)
        return self.cost

    def _forward(self, sparse_inputs, dense_inputs):
        wide_output = paddle.static.nn.fc(
            dense_inputs,
            size=1,
            weight_attr=paddle.ParamAttr(
                initializer=paddle.nn.initializer.TruncatedNormal(mean=0.0, std=1.0 / math.sqrt(self.dense_input_dim))
            ),
        )
        sparse_embs = []
        for s_input in sparse_inputs:
            emb = paddle.static.nn.embedding(
                input=s_input,
                is_sparse=True,
                size=[self.sparse_feature_number, self.sparse_feature_dim],
                param_attr=paddle.ParamAttr(name="SparseFeatFactors", initializer=paddle.nn.initializer.Uniform()),
            )
            sparse_embs.append(paddle.reshape(emb, shape=[-1, self.sparse_feature_dim]))
        deep_output = paddle.concat(x=sparse_embs + [dense_inputs], axis=1)
        sizes = [deep_output.shape[1]] + self.fc_sizes + [1]
        for i in range(len(sizes) - 1):
            init = paddle.nn.initializer.Normal(std=1.0 / math.sqrt(sizes[i]))
            act = "relu" if i < len(sizes) - 2 else None
            deep_output = paddle.static.nn.fc(
                deep_output, size=sizes[i + 1], activation=act, weight_attr=paddle.ParamAttr(initializer=init)
            )
        return paddle.nn.functional.sigmoid(paddle.add(x=wide_output, y=deep_output))
