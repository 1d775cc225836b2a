"""Cases for the recurrent ops: lstm, gru (over LoD sequences), lstm_unit and gru_unit, with the
NumPy references of Paddle's test_lstm_op.py, test_gru_op.py, test_lstm_unit_op.py and
test_gru_unit_op.py: one Python loop per sequence and step, the batch-ordered intermediates laid out
as Paddle's LoD-to-batch reorder does."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import NOT_EXPORTED, case, rand


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.clip(x, -40.0, 13.0)))


def _tanh(x):
    return 2.0 / (1.0 + np.exp(np.minimum(-2.0 * x, 40.0))) - 1.0


ACT = {"sigmoid": _sigmoid, "tanh": _tanh, "relu": lambda x: np.maximum(x, 0), "identity": lambda x: x}
UNIT_ACT = [ACT["identity"], lambda x: 1.0 / (1.0 + np.exp(-x)), np.tanh, ACT["relu"]]


def _batch_rows(lengths, is_reverse):
    """Paddle's seq2batch index: for each step, the row of each sequence still running, longest first."""
    offsets = np.cumsum([0, *lengths])
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    steps = []
    for t in range(max(lengths, default=0)):
        running = [i for i in order if lengths[i] > t]
        steps.append([offsets[i + 1] - 1 - t if is_reverse else offsets[i] + t for i in running])
    return [r for step in steps for r in step]


def _rows_of(x: LoDTensor, is_reverse):
    """Each sequence's row numbers in the order the op visits them."""
    offsets = x.levels[-1]
    for i, (a, b) in enumerate(zip(offsets[:-1], offsets[1:])):
        yield i, range(b - 1, a - 1, -1) if is_reverse else range(a, b)


def _naive_lstm_rows(Input, Weight, Bias, H0, C0, attrs, proj=None):
    """Paddle's test_lstm_op.py / test_lstmp_op.py step per sequence and row, every value by row."""
    act_gate, act_cell, act_cand = (
        ACT[attrs[k]] for k in ("gate_activation", "cell_activation", "candidate_activation")
    )
    x, d = Input.data, Weight.shape[1] // 4
    b = Bias.ravel()
    w_i, w_f, w_o = (b[4 * d : 5 * d], b[5 * d : 6 * d], b[6 * d :]) if attrs["use_peepholes"] else (0, 0, 0)
    cell_clip, proj_clip = attrs.get("cell_clip", 0.0), attrs.get("proj_clip", 0.0)
    rows = {k: np.zeros((len(x), n)) for k, n in (("hidden", d), ("cell", d), ("cell_act", d), ("gate", 4 * d))}
    rows["out"] = np.zeros((len(x), Weight.shape[0]))
    for i, steps in _rows_of(Input, attrs["is_reverse"]):
        r_prev = np.zeros(Weight.shape[0]) if H0 is None else H0[i]
        c = np.zeros(d) if C0 is None else C0[i]
        for t in steps:
            g = x[t] + b[: 4 * d] + r_prev @ Weight
            cand, g_i, g_f = act_cand(g[:d]), act_gate(g[d : 2 * d] + w_i * c), act_gate(g[2 * d : 3 * d] + w_f * c)
            c = g_f * c + g_i * cand
            c = np.clip(c, -cell_clip, cell_clip) if cell_clip > 0 else c
            g_o = act_gate(g[3 * d :] + w_o * c)
            h = g_o * act_cell(c)
            r_prev = h if proj is None else ACT[attrs["proj_activation"]](h @ proj)
            r_prev = np.clip(r_prev, -proj_clip, proj_clip) if proj_clip > 0 else r_prev
            for key, value in zip(rows, (h, c, act_cell(c), np.concatenate([cand, g_i, g_f, g_o]), r_prev)):
                rows[key][t] = value
    batch = _batch_rows(np.diff(Input.levels[-1]), attrs["is_reverse"])
    return rows, batch


def naive_lstm(Input, Weight, Bias, H0=None, C0=None, **attrs):
    rows, batch = _naive_lstm_rows(Input, Weight, Bias, H0, C0, attrs)
    return {
        "Hidden": LoDTensor(rows["hidden"], Input.levels),
        "Cell": LoDTensor(rows["cell"], Input.levels),
        "BatchGate": rows["gate"][batch],
        "BatchCellPreAct": rows["cell_act"][batch],
    }


def naive_lstmp(Input, Weight, ProjWeight, Bias, H0=None, C0=None, **attrs):
    rows, batch = _naive_lstm_rows(Input, Weight, Bias, H0, C0, attrs, proj=ProjWeight)
    return {
        "Projection": LoDTensor(rows["out"], Input.levels),
        "Cell": LoDTensor(rows["cell"], Input.levels),
        "BatchGate": rows["gate"][batch],
        "BatchCellPreAct": rows["cell_act"][batch],
        "BatchHidden": rows["hidden"][batch],
    }


def _gru_step(x, h_p, w, b, act_gate, act_state, origin_mode):
    """test_gru_unit_op.py's step: Weight read as Paddle lays it out in memory."""
    d = w.shape[0]
    g = x + b
    u_r = act_gate(h_p @ w.flatten()[: d * d * 2].reshape(d, 2 * d) + g[..., : 2 * d])
    u, r = u_r[..., :d], u_r[..., d:]
    r_h_p = r * h_p
    c = act_state(r_h_p @ w.flatten()[d * d * 2 :].reshape(d, d) + g[..., 2 * d :])
    h = (1 - u) * c + u * h_p if origin_mode else u * c + (1 - u) * h_p
    return np.concatenate([u_r, c], axis=-1), r_h_p, h


def naive_gru(Input, Weight, activation, gate_activation, is_reverse, origin_mode, H0=None, Bias=None, **a):
    x, d = Input.data, Weight.shape[0]
    b = np.zeros(3 * d) if Bias is None else Bias.ravel()
    gate, reset, hidden = np.zeros((len(x), 3 * d)), np.zeros((len(x), d)), np.zeros((len(x), d))
    for i, rows in _rows_of(Input, is_reverse):
        h = np.zeros(d) if H0 is None else H0[i]
        for r in rows:
            gate[r], reset[r], h = _gru_step(x[r], h, Weight, b, ACT[gate_activation], ACT[activation], origin_mode)
            hidden[r] = h
    batch = _batch_rows(np.diff(Input.levels[-1]), is_reverse)
    return {
        "BatchGate": gate[batch],
        "BatchResetHiddenPrev": reset[batch],
        "BatchHidden": hidden[batch],
        "Hidden": LoDTensor(hidden, Input.levels),
    }


def naive_lstm_unit(X, C_prev, forget_bias, **a):
    i, f, o, j = np.split(X, 4, axis=1)
    sig = UNIT_ACT[1]
    c = C_prev * sig(f + forget_bias) + sig(i) * np.tanh(j)
    return {"C": c, "H": np.tanh(c) * sig(o)}


def naive_gru_unit(Input, HiddenPrev, Weight, activation, gate_activation, origin_mode, Bias=None, **a):
    b = np.zeros((1, Input.shape[1])) if Bias is None else Bias
    acts = UNIT_ACT[gate_activation], UNIT_ACT[activation]
    gate, reset, hidden = _gru_step(Input, HiddenPrev, Weight, b, *acts, origin_mode)
    return {"Gate": gate, "ResetHiddenPrev": reset, "Hidden": hidden}


# -- lstm: Paddle's test LoDs (empty sequences among them), peepholes, reverse, initial states -----

D = 3
_LSTM_OUTS = {"Hidden": 1, "Cell": 1, "BatchGate": 1, "BatchCellPreAct": 1}
for _name, _lod, _peep, _reverse, _initial, _acts in (
    ("peepholes", [[2, 3, 2]], True, False, False, ("sigmoid", "tanh", "tanh")),
    ("empty_reverse_initial_state", [[2, 0, 4]], True, True, True, ("sigmoid", "tanh", "tanh")),
    ("no_peepholes_identity_cell", [[0, 3, 2]], False, False, True, ("sigmoid", "identity", "tanh")),
    ("ties_in_length", [[2, 3, 3, 1]], False, True, False, ("sigmoid", "tanh", "tanh")),
):
    _t, _n = sum(_lod[0]), len(_lod[0])
    _inputs = {
        "Input": create_lod_tensor(rand(_t, 4 * D, seed=1), _lod),
        "Weight": rand(D, 4 * D, seed=2),
        "Bias": rand(1, (7 if _peep else 4) * D, seed=3),
    }
    if _initial:
        _inputs.update(H0=rand(_n, D, seed=4), C0=rand(_n, D, seed=5))
    case(
        "lstm",
        _inputs,
        attrs=dict(zip(("gate_activation", "cell_activation", "candidate_activation"), _acts))
        | {"use_peepholes": _peep, "is_reverse": _reverse},
        outputs=_LSTM_OUTS,
        name=_name,
        loss_outputs=("Hidden", "Cell"),
        reference=naive_lstm,
    )

# -- lstmp: test_lstmp_op.py's configurations, clips that cut some cells and projections ------------

P = 2
_LSTMP_OUTS = {"Projection": 1, "Cell": 1, "BatchGate": 1, "BatchCellPreAct": 1, "BatchHidden": 1}
for _name, _lod, _peep, _reverse, _initial, _proj_act, _clips in (
    ("peepholes_clips", [[2, 3, 2]], True, False, False, "tanh", (0.4, 0.15)),
    ("empty_reverse_initial_state", [[2, 0, 3]], True, True, True, "tanh", (0.0, 0.0)),
    ("identity_projection_no_peepholes", [[0, 4, 0]], False, False, True, "identity", (0.0, 0.0)),
):
    _t, _n = sum(_lod[0]), len(_lod[0])
    _inputs = {
        "Input": create_lod_tensor(rand(_t, 4 * D, seed=16), _lod),
        "Weight": rand(P, 4 * D, seed=17),
        "ProjWeight": rand(D, P, seed=18),
        "Bias": rand(1, (7 if _peep else 4) * D, seed=19),
    }
    if _initial:
        _inputs.update(H0=rand(_n, P, seed=20), C0=rand(_n, D, seed=21))
    case(
        "lstmp",
        _inputs,
        attrs={
            "use_peepholes": _peep,
            "is_reverse": _reverse,
            "proj_activation": _proj_act,
            "cell_clip": _clips[0],
            "proj_clip": _clips[1],
        },
        outputs=_LSTMP_OUTS,
        name=_name,
        loss_outputs=("Projection", "Cell"),
        reference=naive_lstmp,
    )

# -- gru: test_gru_op.py's configurations ---------------------------------------------------------

_GRU_OUTS = {"BatchGate": 1, "BatchResetHiddenPrev": 1, "BatchHidden": 1, "Hidden": 1}
for _name, _lod, _h0, _bias, _reverse, _origin in (
    ("h0_bias", [[2, 4, 3]], True, True, False, False),
    ("origin_mode_empty", [[0, 3, 4]], True, True, False, True),
    ("empty_between", [[2, 0, 4]], True, True, False, False),
    ("no_h0", [[2, 4, 3]], False, True, False, False),
    ("no_bias_reverse", [[2, 4, 3]], True, False, True, False),
    ("reverse_origin_mode", [[3, 1, 3, 0]], True, True, True, True),
):
    _t, _n = sum(_lod[0]), len(_lod[0])
    _inputs = {"Input": create_lod_tensor(rand(_t, 3 * D, seed=6), _lod), "Weight": rand(D, 3 * D, seed=7)}
    if _h0:
        _inputs["H0"] = rand(_n, D, seed=8)
    if _bias:
        _inputs["Bias"] = rand(1, 3 * D, seed=9)
    case(
        "gru",
        _inputs,
        attrs={"is_reverse": _reverse, "origin_mode": _origin},
        outputs=_GRU_OUTS,
        name=_name,
        loss_outputs=("Hidden",),
        reference=naive_gru,
    )

# -- lstm_unit and gru_unit: one step, test_lstm_unit_op.py's and test_gru_unit_op.py's ------------

for _name, _forget_bias in (("no_forget_bias", 0.0), ("forget_bias", 0.5)):
    case(
        "lstm_unit",
        {"X": rand(5, 4 * D, seed=10), "C_prev": rand(5, D, seed=11)},
        attrs={"forget_bias": _forget_bias},
        outputs={"C": 1, "H": 1},
        name=_name,
        reference=naive_lstm_unit,
    )

for _name, _bias, _acts, _origin in (
    ("no_bias", False, (2, 1), False),
    ("bias_identity_origin_mode", True, (0, 1), True),
    ("bias_relu", True, (3, 1), False),
):
    _inputs = {
        "Input": rand(4, 3 * D, low=-0.5, high=0.5, seed=12),
        "HiddenPrev": rand(4, D, seed=13),
        "Weight": rand(D, 3 * D, low=-0.6, high=0.6, seed=14),
    }
    if _bias:
        _inputs["Bias"] = rand(1, 3 * D, low=-0.1, high=0.1, seed=15)
    case(
        "gru_unit",
        _inputs,
        attrs={"activation": _acts[0], "gate_activation": _acts[1], "origin_mode": _origin},
        outputs={"Gate": 1, "ResetHiddenPrev": 1, "Hidden": 1},
        name=_name,
        loss_outputs=("Hidden",),
        reference=naive_gru_unit,
    )

NOT_EXPORTED.update(
    dict.fromkeys(
        ("lstm", "lstmp", "gru"),
        "no ONNX exporter yet: its sequences come from the LoD's offsets, which are not a graph input "
        "(export to ONNX LSTM/GRU over a padded batch comes later)",
    )
    | dict.fromkeys(
        ("lstm_unit", "gru_unit"),
        "no ONNX exporter yet (one step of LSTM/GRU; export of the recurrent ops comes later)",
    )
)
