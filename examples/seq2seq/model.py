"""The seq2seq model in Paddle 2.0's layers, built into static programs (so that it also trains
with parameter servers): a GRU encoder (`nn.GRU`, the fused rnn op) reads the padded source; a
`GRUCell` decoder starts from the encoder's last state. Training feeds the decoder the target
shifted right (teacher forcing, `nn.RNN` over the cell: a while loop in the program); decoding runs
the same cell under `nn.BeamSearchDecoder` and `nn.dynamic_decode`. Both programs are built from
one `Seq2Seq` under fresh unique names, so their parameters have the same names and the inference
program reads what training wrote."""

from __future__ import annotations

import numpy as np

import fleetgraph as paddle
from fleetgraph import nn
from fleetgraph.ir import unique_name

PAD, BOS, EOS = 0, 1, 2
SRC_LEN = 8  # the longest source the generator writes
TRG_LEN = SRC_LEN + 1  # and its translation with BOS before (decoder input) or EOS after (label)


class Seq2Seq:
    def __init__(self, vocab: int, emb: int = 32, hidden: int = 128) -> None:
        self.hidden = hidden
        self.src_emb = nn.Embedding(vocab, emb)
        self.trg_emb = nn.Embedding(vocab, emb)
        self.encoder = nn.GRU(emb, hidden)
        self.cell = nn.GRUCell(emb, hidden)
        self.decoder = nn.RNN(self.cell)
        self.out = nn.Linear(hidden, vocab)

    def encode(self, src, src_len):
        _, last = self.encoder(self.src_emb(src), sequence_length=src_len)
        return paddle.reshape(last, [-1, self.hidden])  # one layer, one direction: [batch, hidden]


def _inputs():
    src = paddle.static.data("src", [None, SRC_LEN], "int64")
    src_len = paddle.static.data("src_len", [None], "int64")
    return src, src_len


def train_program(vocab: int, seed: int = 7):
    """(main, startup, loss) with parameters drawn from `seed`: the cross entropy summed over each
    target's real tokens, averaged over the sentences of the batch."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = seed  # every process draws the same initial parameters
    with paddle.static.program_guard(main, startup), unique_name.guard():
        src, src_len = _inputs()
        trg_in = paddle.static.data("trg_in", [None, TRG_LEN], "int64")
        trg_out = paddle.static.data("trg_out", [None, TRG_LEN], "int64")
        trg_mask = paddle.static.data("trg_mask", [None, TRG_LEN], "float32")
        model = Seq2Seq(vocab)
        decoded, _ = model.decoder(model.trg_emb(trg_in), initial_states=model.encode(src, src_len))
        logits = model.out(decoded)
        cost = nn.functional.softmax_with_cross_entropy(logits, paddle.reshape(trg_out, [0, 0, 1]))
        cost = paddle.reshape(cost, [0, 0]) * trg_mask
        # per sentence, then the batch's mean: workers averaging their halves' gradients is one process
        # on the whole batch (a mean over tokens would weigh the halves by their token counts)
        loss = paddle.mean(paddle.fluid.layers.reduce_sum(cost, dim=1))
    return main, startup, loss


def infer_program(vocab: int, beam_size: int = 4):
    """(main, ids): ids [batch, steps, beam], the best hypothesis first."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), unique_name.guard():
        src, src_len = _inputs()
        model = Seq2Seq(vocab)
        decoder = nn.BeamSearchDecoder(model.cell, BOS, EOS, beam_size, embedding_fn=model.trg_emb, output_fn=model.out)
        # the decoder starts each of a sentence's beams from the encoder's state
        ids, _ = nn.dynamic_decode(decoder, inits=model.encode(src, src_len), max_step_num=TRG_LEN)
    return main, ids


def read_pairs(path: str) -> list[tuple[list[int], list[int]]]:
    pairs = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 2:
                raise ValueError(f"{path}:{number}: expected source<TAB>target, got {line!r}")
            source, target = ([int(t) for t in side.split()] for side in parts)
            if not 0 < len(source) <= SRC_LEN or len(target) >= TRG_LEN:
                raise ValueError(f"{path}:{number}: a source of 1..{SRC_LEN} words and a shorter target expected")
            pairs.append((source, target))
    return pairs


def feed(pairs) -> dict:
    """The padded batch: source and its lengths, decoder input (BOS + target), label (target + EOS),
    and the label's mask (1 on its real tokens)."""
    n = len(pairs)
    src = np.full((n, SRC_LEN), PAD, "int64")
    trg_in = np.full((n, TRG_LEN), PAD, "int64")
    trg_out = np.full((n, TRG_LEN), PAD, "int64")
    mask = np.zeros((n, TRG_LEN), "float32")
    for i, (source, target) in enumerate(pairs):
        src[i, : len(source)] = source
        trg_in[i, : len(target) + 1] = [BOS, *target]
        trg_out[i, : len(target) + 1] = [*target, EOS]
        mask[i, : len(target) + 1] = 1.0
    lengths = np.array([len(s) for s, _ in pairs], "int64")
    return {"src": src, "src_len": lengths, "trg_in": trg_in, "trg_out": trg_out, "trg_mask": mask}


def exact_matches(ids: np.ndarray, pairs) -> float:
    """The share of sentences whose best beam is the target followed by EOS."""
    hits = 0
    for best, (_, target) in zip(ids[:, :, 0], pairs):
        words = best.tolist()
        words = words[: words.index(EOS)] if EOS in words else words
        hits += words == target
    return hits / len(pairs)
