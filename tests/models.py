"""Small models the tests build in fresh programs, in both API spellings."""

from __future__ import annotations

import numpy as np

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, unique_name


def fit_a_line_2x(seed=7, optimizer=None):
    """The issue's 2.x script: returns (main, startup, x, y, loss)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = seed
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        pred = paddle.static.nn.fc(x, size=1)
        loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
        (optimizer or paddle.optimizer.SGD(learning_rate=0.001)).minimize(loss)
    return main, startup, x, y, loss


def fit_a_line_fluid(seed=7, optimizer=None):
    """Seed 001's Fluid 1.x model: returns (main, startup, x, y, loss)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = seed
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        y_predict = fluid.layers.fc(input=x, size=1, act=None)
        loss = fluid.layers.square_error_cost(input=y_predict, label=y)
        avg_loss = fluid.layers.mean(loss)
        (optimizer or fluid.optimizer.SGD(learning_rate=0.001)).minimize(avg_loss)
    return main, startup, x, y, avg_loss


def mlp(optimizer_factory, hidden=(512, 512), classes=10, seed=3):
    """784-h-h-10 MLP with softmax cross entropy: returns (main, startup, image, label, loss, acc)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = seed
    with program_guard(main, startup), unique_name.guard():
        image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        h = image
        for size in hidden:
            h = paddle.static.nn.fc(h, size=size, activation="relu")
        logits = paddle.static.nn.fc(h, size=classes)
        loss = paddle.nn.functional.cross_entropy(logits, label)
        acc = paddle.metric.accuracy(input=logits, label=label, k=1)
        optimizer_factory().minimize(loss)
    return main, startup, image, label, loss, acc


def loop_rnn(optimizer_factory, hidden=16, steps=3, classes=10, seed=3):
    """The MLP's task through a recurrence in a while loop: h0 = tanh(fc(image)), then `steps` times
    h = tanh(h W + b + h0), then softmax cross entropy. W and b are read in every iteration, so their
    gradients are sums over the iterations. Returns (main, startup, image, label, loss)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = seed
    layers = fluid.layers
    with program_guard(main, startup), unique_name.guard():
        image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        h0 = paddle.static.nn.fc(image, size=hidden, activation="tanh")
        w = layers.create_parameter([hidden, hidden], "float32", name="loop_w")
        b = layers.create_parameter([hidden], "float32", name="loop_b", is_bias=True)
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", steps)

        def body(i, h):
            return [i + 1, layers.tanh(layers.elementwise_add(layers.matmul(h, w), b) + h0)]

        _, h = layers.while_loop(lambda i, h: layers.less_than(i, n), body, [i, layers.assign(h0)])
        logits = paddle.static.nn.fc(h, size=classes)
        loss = paddle.nn.functional.cross_entropy(logits, label)
        optimizer_factory().minimize(loss)
    return main, startup, image, label, loss


SPARSE_SLOTS, SPARSE_VOCAB, SPARSE_WIDTH = 3, 5000, 4  # 20,000 elements: one block per pserver


def sparse_ctr(optimizer_factory, seed=5, is_sparse=True):
    """A tiny CTR model: SPARSE_SLOTS id columns looked up in one table "table" (is_sparse: in
    parameter-server training it lives on the pservers), concatenated with a dense column, a
    hidden layer and softmax cross entropy. Returns (main, startup, loss)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = seed
    with program_guard(main, startup), unique_name.guard():
        slots = [fluid.layers.data(name=f"C{i}", shape=[1], dtype="int64") for i in range(SPARSE_SLOTS)]
        dense = fluid.layers.data(name="dense", shape=[2], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        attr = fluid.ParamAttr(name="table", initializer=fluid.initializer.Uniform(-0.1, 0.1))
        embs = [
            fluid.layers.embedding(s, size=[SPARSE_VOCAB, SPARSE_WIDTH], is_sparse=is_sparse, param_attr=attr)
            for s in slots
        ]
        hidden = fluid.layers.fc(fluid.layers.concat(embs + [dense], axis=1), size=16, act="relu")
        predict = fluid.layers.fc(hidden, size=2, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))
        optimizer_factory().minimize(loss)
    return main, startup, loss


W2V_VOCAB, W2V_WIDTH, W2V_HIDDEN = 4000, 8, 32  # the table: 32,000 elements, a block per pserver
W2V_CLASSES, W2V_DEPTH = 1024, 10  # the loss's weight: two blocks too; hsigmoid's paths: 10 nodes
W2V_NEGATIVES = [3, 200, 517, 800, 1011]


def word2vec(optimizer_factory, loss="nce", is_sparse=False, seed=5):
    """A word2vec-like model: each id looked up in "w2v_table" [W2V_VOCAB, W2V_WIDTH] (is_sparse: the
    pservers hold it, grown as ids touch it), a tanh layer, then a sampled loss over W2V_CLASSES
    classes whose weight's gradient is SelectedRows with is_sparse: nce against the fixed negatives
    W2V_NEGATIVES (the op's custom_neg_classes, so any split of a batch samples alike), or hsigmoid
    through the complete binary tree whose paths come with the batch. Returns (main, startup, loss)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = seed
    with program_guard(main, startup), unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        attr = fluid.ParamAttr(name="w2v_table", initializer=fluid.initializer.Uniform(-0.5, 0.5))
        emb = fluid.layers.embedding(ids, size=[W2V_VOCAB, W2V_WIDTH], is_sparse=is_sparse, param_attr=attr)
        hidden = fluid.layers.fc(emb, size=W2V_HIDDEN, act="tanh")
        if loss == "nce":
            cost = fluid.layers.nce(hidden, label, W2V_CLASSES, num_neg_samples=len(W2V_NEGATIVES), is_sparse=is_sparse)
            next(op for op in main.global_block().ops if op.type == "nce").attrs["custom_neg_classes"] = W2V_NEGATIVES
        else:
            paths = [fluid.layers.data(name=n, shape=[W2V_DEPTH], dtype="int64") for n in ("path_table", "path_code")]
            cost = fluid.layers.hsigmoid(
                hidden,
                label,
                W2V_CLASSES - 1,
                path_table=paths[0],
                path_code=paths[1],
                is_custom=True,
                is_sparse=is_sparse,
            )
        avg = fluid.layers.mean(cost)
        optimizer_factory().minimize(avg)
    return main, startup, avg


def tree_paths(label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(path_table, path_code) [N, W2V_DEPTH] of each label's leaf in the complete binary tree of
    W2V_CLASSES leaves (heap numbering, root 1; inner node k is row k - 1 of the weight)."""
    node = label.reshape(-1) + W2V_CLASSES
    table, code = [], []
    for _ in range(W2V_DEPTH):
        code.append(node & 1)
        node = node >> 1
        table.append(node - 1)
    return np.stack(table[::-1], axis=1).astype("int64"), np.stack(code[::-1], axis=1).astype("int64")


def lstm_mlp(optimizer_factory, hidden=16, classes=10, seed=3):
    """The MLP's task through paddle.nn.LSTM (the fused `rnn` op): each 784-feature image as 28 steps
    of 28, the last step's output to softmax cross entropy. Returns (main, startup, image, label, loss)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = seed
    was_dynamic = paddle.in_dynamic_mode()
    paddle.enable_static()  # paddle.nn layers create their weights in the mode they are built in
    try:
        with program_guard(main, startup), unique_name.guard():
            image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
            label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
            out, _ = paddle.nn.LSTM(28, hidden)(paddle.reshape(image, [-1, 28, 28]))
            logits = paddle.static.nn.fc(out[:, -1, :], size=classes)
            loss = paddle.nn.functional.cross_entropy(logits, label)
            optimizer_factory().minimize(loss)
    finally:
        if was_dynamic:
            paddle.disable_static()
    return main, startup, image, label, loss


def housing_batches(batch_size=20, epochs=1):
    reader = paddle.batch(paddle.dataset.uci_housing.train(), batch_size)
    for _ in range(epochs):
        for data in reader():
            x = np.array([d[0] for d in data], dtype="float32")
            y = np.array([d[1] for d in data], dtype="float32")
            yield x, y


def train(main, startup, feeds, fetch, scope=None):
    """Run startup then one step per feed dict; returns the fetched values of every step."""
    scope = scope or paddle.static.Scope()
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup, scope=scope)
    return [exe.run(main, feed=f, fetch_list=fetch, scope=scope) for f in feeds], scope


def global_batches(model: str, steps: int, rows: int, seed: int = 5):
    """Seeded batches of learnable tasks, the same in every process: for fit_a_line y is a linear
    function of x; for the MLP, images scatter around one of ten fixed centers, the label naming it."""
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(99).normal(size=(10, 784)).astype("float32")
    for _ in range(steps):
        if model == "fit_a_line":
            x = rng.normal(size=(rows, 13)).astype("float32")
            yield {"x": x, "y": (x.sum(axis=1, keepdims=True) * 0.3 + 1).astype("float32")}
        elif model == "sparse":  # 60 ids spread over the table; a third of them click in the first slot
            ids = rng.integers(0, 60, size=(SPARSE_SLOTS, rows, 1)) * (SPARSE_VOCAB // 60)
            score = (ids[0] < 20 * (SPARSE_VOCAB // 60)) + (ids[1] < 20 * (SPARSE_VOCAB // 60)) / 2
            feed = {f"C{i}": ids[i] for i in range(SPARSE_SLOTS)}
            feed["dense"] = rng.normal(size=(rows, 2)).astype("float32")
            feed["label"] = (score >= 1).astype("int64")
            yield feed
        elif model.startswith("w2v"):  # 40 ids spread over the table, each word's class fixed by its id
            ids = rng.integers(0, 40, size=(rows, 1)) * (W2V_VOCAB // 40)
            label = (ids * 97 // (W2V_VOCAB // 40)) % W2V_CLASSES
            feed = {"ids": ids, "label": label}
            if "hsigmoid" in model:
                feed["path_table"], feed["path_code"] = tree_paths(label)
            yield feed
        else:
            label = rng.integers(0, 10, size=rows)
            image = centers[label] + rng.normal(0, 2.0, size=(rows, 784)).astype("float32")
            yield {"image": image.astype("float32"), "label": label.reshape(-1, 1).astype("int64")}
