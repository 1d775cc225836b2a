"""Writes a parallel corpus for the seq2seq example: each line a source sentence and its
translation, token ids separated by spaces, the two sides by a tab. The "language pair" is a
reversal with a word mapping: the target is the source read backwards, each word w becoming
(w * 7) % vocabulary shifted past the special ids, so the model must learn both the order and the
dictionary.

    python generate_data.py [--out data] [--train 4000] [--test 200] [--vocab 40] [--seed 1]
"""

import argparse
import os

import numpy as np

PAD, BOS, EOS = 0, 1, 2  # the special ids; words are 3 .. vocab-1


def translate(source: list[int], vocab: int) -> list[int]:
    words = vocab - 3
    return [3 + ((w - 3) * 7) % words for w in reversed(source)]


def sentences(rng, count: int, vocab: int, min_len: int = 3, max_len: int = 8):
    for _ in range(count):
        source = rng.integers(3, vocab, size=int(rng.integers(min_len, max_len + 1))).tolist()
        yield source, translate(source, vocab)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="data")
    p.add_argument("--train", type=int, default=4000)
    p.add_argument("--test", type=int, default=200)
    p.add_argument("--vocab", type=int, default=40)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if args.vocab < 4 or (args.vocab - 3) % 7 == 0:
        raise SystemExit(f"--vocab {args.vocab}: expected at least 4 and vocab - 3 not a multiple of 7")
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.out, exist_ok=True)
    for name, count in (("train.txt", args.train), ("test.txt", args.test)):
        with open(os.path.join(args.out, name), "w") as f:
            for source, target in sentences(rng, count, args.vocab):
                f.write(" ".join(map(str, source)) + "\t" + " ".join(map(str, target)) + "\n")
    print(f"wrote {args.train} training and {args.test} test pairs to {args.out}/ (vocabulary {args.vocab})")


if __name__ == "__main__":
    main()
