"""Writes movie reviews for the sentiment example, one a line: the label (1 positive, 0 negative),
a tab, then the review's words separated by spaces, as word ids would come from
`paddle.dataset.imdb` once spelled out. A --polar share of the words ("w0" .. "w{vocab-1}") are
opinion words, half of them positive and half negative; a review is a label drawn at even odds,
5 to 40 neutral words drawn by a Zipf law, and 1 to 3 opinion words of the label's side at random
places; then the label is flipped with probability --noise. The best accuracy is therefore about
1 - noise.

    python generate_data.py [--out data] [--train 2000] [--test 400] [--vocab 300] [--polar 0.2]
                            [--noise 0.05] [--seed 1]
"""

import argparse
import os

import numpy as np


class Reviews:
    """The opinion words of each side and how often the neutral words are used."""

    def __init__(self, vocab: int, polar: float, noise: float, seed: int) -> None:
        opinions = int(vocab * polar) // 2 * 2
        if opinions < 2 or opinions >= vocab or not 0 <= noise <= 0.5:
            raise ValueError(
                f"vocab {vocab}, polar {polar}, noise {noise}: "
                "expected 2 to vocab - 1 opinion words and 0 <= noise <= 0.5"
            )
        words = np.random.default_rng(seed).permutation(vocab)
        self.sides = words[: opinions // 2], words[opinions // 2 : opinions]  # negative, positive
        self.neutral = words[opinions:]
        weights = 1.0 / np.arange(1, len(self.neutral) + 1)
        self.zipf = weights / weights.sum()
        self.noise = noise

    def review(self, rng) -> tuple[int, list[str]]:
        label = int(rng.integers(2))
        words = list(rng.choice(self.neutral, size=int(rng.integers(5, 41)), p=self.zipf))
        for opinion in rng.choice(self.sides[label], size=int(rng.integers(1, 4))):
            words.insert(int(rng.integers(len(words) + 1)), opinion)
        return label ^ int(rng.random() < self.noise), [f"w{w}" for w in words]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="data")
    p.add_argument("--train", type=int, default=2000, help="reviews")
    p.add_argument("--test", type=int, default=400, help="reviews")
    p.add_argument("--vocab", type=int, default=300)
    p.add_argument("--polar", type=float, default=0.2)
    p.add_argument("--noise", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    reviews = Reviews(args.vocab, args.polar, args.noise, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    os.makedirs(args.out, exist_ok=True)
    for name, count in (("train.txt", args.train), ("test.txt", args.test)):
        with open(os.path.join(args.out, name), "w") as f:
            for _ in range(count):
                label, words = reviews.review(rng)
                f.write(f"{label}\t{' '.join(words)}\n")
    print(f"wrote {args.train} training and {args.test} test reviews to {args.out}/ (vocabulary {args.vocab})")


if __name__ == "__main__":
    main()
