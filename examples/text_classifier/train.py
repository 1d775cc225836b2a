"""A Transformer encoder sentiment classifier on paddle.text.Imdb, in dynamic mode (Paddle 2.0's
default): word embeddings plus sinusoidal positions, paddle.nn.TransformerEncoder with the padding
masked out of attention, a mean over the review's words, and a Linear layer, trained with Adam.
Without aclImdb in Paddle's cache the reviews are fleetgraph's synthetic stand-in (it says so on
stderr). The vocabulary is cut to the most frequent words and each review to its first words so
that a CPU trains it in seconds."""

import argparse

import numpy as np

import fleetgraph as paddle
import fleetgraph.nn.functional as F


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--vocab_size", type=int, default=2000, help="the most frequent words kept; the others are <unk>"
    )
    parser.add_argument("--seq_len", type=int, default=64, help="the first words of each review kept")
    parser.add_argument("--d_model", type=int, default=32)
    parser.add_argument("--nhead", type=int, default=2)
    parser.add_argument("--num_layers", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--seed", type=int, default=24)
    return parser.parse_args(argv)


def arrays(dataset, vocab_size: int, seq_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Word ids [n, seq_len] (ids past the cut made vocab_size - 1, padding vocab_size) and labels [n, 1].
    Imdb's word ids count from the most frequent word, so the cut keeps the most frequent."""
    ids = np.full((len(dataset), seq_len), vocab_size, dtype="int64")
    labels = np.zeros((len(dataset), 1), dtype="int64")
    for i in range(len(dataset)):
        doc, label = dataset[i]
        words = np.minimum(np.asarray(doc, dtype="int64")[:seq_len], vocab_size - 1)
        ids[i, : len(words)] = words
        labels[i] = np.asarray(label).reshape(-1)[0]
    return ids, labels


def positions(seq_len: int, d_model: int) -> np.ndarray:
    """The sinusoidal position encoding of "Attention Is All You Need", [seq_len, d_model]."""
    angle = np.arange(seq_len)[:, None] / np.power(10000.0, 2 * (np.arange(d_model) // 2) / d_model)[None, :]
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle)).astype("float32")


class TransformerClassifier(paddle.nn.Layer):
    def __init__(self, vocab_size: int, seq_len: int, d_model: int, nhead: int, num_layers: int):
        super().__init__()
        self.pad = vocab_size
        self.embedding = paddle.nn.Embedding(vocab_size + 1, d_model, padding_idx=vocab_size)
        self.positions = paddle.to_tensor(positions(seq_len, d_model))
        layer = paddle.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=2 * d_model, dropout=0.1)
        self.encoder = paddle.nn.TransformerEncoder(layer, num_layers)
        self.classifier = paddle.nn.Linear(d_model, 2)

    def forward(self, ids):
        words = paddle.cast(ids != self.pad, "float32")  # [batch, seq_len]: 1 for a word, 0 for padding
        attention_mask = paddle.unsqueeze((words - 1.0) * 1e9, [1, 2])  # padding never attended to
        hidden = self.encoder(self.embedding(ids) + self.positions, src_mask=attention_mask)
        weights = paddle.unsqueeze(words, -1)
        pooled = paddle.sum(hidden * weights, axis=1) / paddle.clip(paddle.sum(weights, axis=1), min=1.0)
        return self.classifier(pooled)


def accuracy_on(model, loader) -> float:
    model.eval()
    metric = paddle.metric.Accuracy()
    with paddle.no_grad():
        for ids, labels in loader:
            metric.update(metric.compute(model(ids), labels))
    model.train()
    return float(metric.accumulate())


def main(argv=None):
    args = parse_args(argv)
    paddle.seed(args.seed)
    np.random.seed(args.seed)
    train = arrays(paddle.text.Imdb(mode="train"), args.vocab_size, args.seq_len)
    test = arrays(paddle.text.Imdb(mode="test"), args.vocab_size, args.seq_len)
    train_loader = paddle.io.DataLoader(
        paddle.io.TensorDataset([paddle.to_tensor(a) for a in train]), batch_size=args.batch_size, shuffle=True
    )
    test_loader = paddle.io.DataLoader(paddle.io.TensorDataset([paddle.to_tensor(a) for a in test]), batch_size=256)

    model = TransformerClassifier(args.vocab_size, args.seq_len, args.d_model, args.nhead, args.num_layers)
    optimizer = paddle.optimizer.Adam(learning_rate=args.lr, parameters=model.parameters())
    for epoch in range(args.epochs):
        for step, (ids, labels) in enumerate(train_loader):
            loss = F.cross_entropy(model(ids), labels)
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            if step % 20 == 0:
                print(f"epoch {epoch} step {step} loss {float(loss.numpy()):.4f}")
        print(f"epoch {epoch} test accuracy {accuracy_on(model, test_loader):.4f}")


if __name__ == "__main__":
    main()
