"""LeNet on MNIST the Paddle 2.0 way: paddle.vision datasets, transforms and models, trained and
evaluated by paddle.Model (fit with its progress bar), saved, loaded into a fresh Model, and used to
predict. Without MNIST's files in Paddle's cache the dataset is fleetgraph's synthetic stand-in (it
says so on stderr). Under `python -m fleetgraph.distributed.launch --nproc_per_node 2` paddle.Model
wraps the network in paddle.DataParallel and gives each trainer its share of every epoch."""

import argparse
import hashlib

import numpy as np

import fleetgraph as paddle
import fleetgraph.vision.transforms as T


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=32, help="per trainer")
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--save_dir", default="output/lenet")
    parser.add_argument("--seed", type=int, default=90)
    return parser.parse_args(argv)


def datasets():
    """MNIST as float arrays of 0-255 (backend 'cv2': Pillow is not needed), made [1, 28, 28]
    tensors in [-1, 1] by the transforms."""
    transform = T.Compose([T.ToTensor(), T.Normalize(mean=[127.5], std=[127.5], data_format="CHW")])
    train = paddle.vision.datasets.MNIST(mode="train", transform=transform, backend="cv2")
    test = paddle.vision.datasets.MNIST(mode="test", transform=transform, backend="cv2")
    return train, test


def prepared_model(lr: float) -> paddle.Model:
    image = paddle.static.InputSpec([None, 1, 28, 28], "float32", "image")
    label = paddle.static.InputSpec([None, 1], "int64", "label")
    model = paddle.Model(paddle.vision.models.LeNet(num_classes=10), inputs=[image], labels=[label])
    optimizer = paddle.optimizer.Adam(learning_rate=lr, parameters=model.parameters())
    model.prepare(optimizer, paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    return model


def main(argv=None):
    args = parse_args(argv)
    paddle.seed(args.seed)
    np.random.seed(args.seed)
    rank, nranks = paddle.distributed.get_rank(), paddle.distributed.get_world_size()
    train, test = datasets()

    model = prepared_model(args.lr)
    model.fit(train, epochs=args.epochs, batch_size=args.batch_size, shuffle=True, verbose=1)
    accuracy = model.evaluate(test, batch_size=args.batch_size, verbose=0)["acc"]
    digest = hashlib.md5(b"".join(p.numpy().tobytes() for p in model.parameters())).hexdigest()
    print(f"trainer {rank} of {nranks}: parameters' md5 {digest}")
    model.save(args.save_dir)  # trainer 0 writes; the others wait for it
    if nranks > 1:
        paddle.distributed.barrier()

    restored = prepared_model(args.lr)
    restored.load(args.save_dir)
    # predict gives each trainer the outputs of its share of the test set: the share this sampler draws
    share = paddle.io.DistributedBatchSampler(test, args.batch_size)
    labels = np.array([int(test[i][1][0]) for batch in share for i in batch])
    logits = np.concatenate(restored.predict(test, batch_size=args.batch_size, verbose=0)[0])
    restored_accuracy = float((logits.argmax(axis=1) == labels).mean())
    print(f"trainer {rank}: test accuracy {accuracy:.4f}; "
          f"predicted by the model loaded from {args.save_dir}: {restored_accuracy:.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
