"""Write Criteo-format click logs with a learnable signal: raw_data/part-0 ... part-(N-1).

A line is `label \\t I1 ... I13 \\t C1 ... C26`, tab-separated, as Criteo's display-ads logs: 13
integer counts and 26 categorical values (8 hex digits), either of which may be missing (empty). The
click probability is a logistic function of four counts and of a hidden weight of the values of
eight of the categorical columns (values drawn with a Zipf-like skew, as real categories are), so a
model that learns embeddings of those values and a few of the counts reaches an AUC well above 0.5.

    python generate_data.py [--files 4] [--lines 5000] [--out raw_data] [--seed 0] [--count_scale 1]

`--count_scale K` draws every count K times its usual size: larger inputs after the reader's scaling,
and the counts' part of the click logit sqrt(K) times as strong, which the network learns in far
fewer steps (at K = 3, 4,000 samples reach the AUC that 10,000 give at K = 1: tests/test_examples.py).
"""

import argparse
import os
import zlib

import numpy as np

DENSE, SPARSE = 13, 26
INFORMATIVE = (0, 1, 2, 3, 4, 5, 6, 7)  # the categorical columns whose values carry weight (the smaller ones)
VOCAB = [int(v) for v in np.geomspace(8, 20000, SPARSE).round()]  # values per categorical column
# counts of a typical size for each column's scale in the reader (criteo_reader.py CONT_DIFF)
SCALE = [20, 603, 100, 50, 64000, 500, 100, 50, 500, 10, 10, 10, 50]
LAMBDA = [0.3 * s for s in SCALE]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=4)
    p.add_argument("--lines", type=int, default=5000, help="lines per file")
    p.add_argument("--out", default="raw_data")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count_scale", type=float, default=1.0, help="counts K times their usual size")
    return p.parse_args()


class ClickModel:
    """The hidden truth: a weight per value of the informative columns, and of three counts."""

    def __init__(self, seed: int, count_scale: float = 1.0) -> None:
        if count_scale <= 0:
            raise ValueError(f"generate_data: count_scale must be positive; expected > 0, got {count_scale}")
        self.lam = [count_scale * lam for lam in LAMBDA]
        rng = np.random.default_rng(seed)
        self.weights = [rng.normal(0, 1.0, size=v) if j in INFORMATIVE else np.zeros(v) for j, v in enumerate(VOCAB)]
        self.popularity = [1.0 / np.arange(1, v + 1) ** 0.8 for v in VOCAB]
        self.popularity = [p / p.sum() for p in self.popularity]
        self.names = [[f"{zlib.crc32(f'{j}:{k}'.encode()):08x}" for k in range(v)] for j, v in enumerate(VOCAB)]

    def lines(self, rng: np.random.Generator, n: int):
        counts = rng.poisson(lam=self.lam, size=(n, DENSE))
        values = np.stack([rng.choice(v, size=n, p=p) for v, p in zip(VOCAB, self.popularity)], axis=1)
        logit = sum(self.weights[j][values[:, j]] for j in INFORMATIVE) * 1.2
        scaled = counts / np.asarray(SCALE)  # as the reader scales them (criteo_reader.py)
        logit += 16.0 * (scaled[:, 0] - scaled[:, 9] + scaled[:, 10] - scaled[:, 11])
        label = rng.random(n) < 1 / (1 + np.exp(-logit))
        missing_dense, missing_sparse = rng.random((n, DENSE)) < 0.05, rng.random((n, SPARSE)) < 0.03
        for i in range(n):
            dense = ["" if missing_dense[i, j] else str(counts[i, j]) for j in range(DENSE)]
            sparse = ["" if missing_sparse[i, j] else self.names[j][values[i, j]] for j in range(SPARSE)]
            yield "\t".join([str(int(label[i])), *dense, *sparse])


def main() -> None:
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    model, rng = ClickModel(args.seed, args.count_scale), np.random.default_rng(args.seed + 1)
    for f in range(args.files):
        with open(os.path.join(args.out, f"part-{f}"), "w") as out:
            out.writelines(line + "\n" for line in model.lines(rng, args.lines))
    print(f"wrote {args.files} files of {args.lines} lines to {args.out}/")


if __name__ == "__main__":
    main()
