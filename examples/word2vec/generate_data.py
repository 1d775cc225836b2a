"""Writes a text corpus for the word2vec example, one sentence a line, words separated by spaces,
in the shape of `paddle.dataset.imikolov`'s PTB files. The words ("w0" .. "w{vocab-1}") follow a
Zipf law, and the text has an n-gram structure the model can learn: after word w, the next word is
`successor[w]` (a fixed random permutation) with probability --follow, else a fresh Zipf draw. The
best next-word accuracy from the context is therefore about --follow plus the chance of guessing a
fresh draw.

    python generate_data.py [--out data] [--train 3000] [--test 300] [--vocab 200] [--follow 0.7] [--seed 1]
"""

import argparse
import os

import numpy as np


class Corpus:
    """The hidden language: Zipf word frequencies and each word's likely successor."""

    def __init__(self, vocab: int, follow: float, seed: int) -> None:
        if vocab < 2 or not 0 <= follow <= 1:
            raise ValueError(f"vocab {vocab}, follow {follow}: expected vocab >= 2 and 0 <= follow <= 1")
        rng = np.random.default_rng(seed)
        weights = 1.0 / np.arange(1, vocab + 1)
        self.zipf = weights / weights.sum()
        self.successor = rng.permutation(vocab)
        self.follow = follow

    def sentence(self, rng, length: int) -> list[str]:
        words = [int(rng.choice(len(self.zipf), p=self.zipf))]
        while len(words) < length:
            follows = rng.random() < self.follow
            words.append(int(self.successor[words[-1]]) if follows else int(rng.choice(len(self.zipf), p=self.zipf)))
        return [f"w{w}" for w in words]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="data")
    p.add_argument("--train", type=int, default=3000, help="sentences")
    p.add_argument("--test", type=int, default=300, help="sentences")
    p.add_argument("--vocab", type=int, default=200)
    p.add_argument("--follow", type=float, default=0.7)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    corpus = Corpus(args.vocab, args.follow, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    os.makedirs(args.out, exist_ok=True)
    for name, count in (("train.txt", args.train), ("test.txt", args.test)):
        with open(os.path.join(args.out, name), "w") as f:
            for _ in range(count):
                f.write(" ".join(corpus.sentence(rng, int(rng.integers(8, 25)))) + "\n")
    print(f"wrote {args.train} training and {args.test} test sentences to {args.out}/ (vocabulary {args.vocab})")


if __name__ == "__main__":
    main()
