"""paddle.Model under the launcher: each trainer fits its share of one dataset through DataParallel;
prints its evaluation and a checksum of its parameters (equal on every trainer)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from test_hapi_model import Pairs, X, Y  # noqa: E402

import fleetgraph as paddle  # noqa: E402
from fleetgraph import nn  # noqa: E402

paddle.disable_static()
paddle.seed(1)
net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
model = paddle.Model(net)
model.prepare(paddle.optimizer.Adam(0.05, parameters=net.parameters()), nn.CrossEntropyLoss(), paddle.metric.Accuracy())
model.fit(Pairs(X, Y), epochs=4, batch_size=32, verbose=2, shuffle=False)
result = model.evaluate(Pairs(X, Y), batch_size=64, verbose=0)
checksum = sum(float(np.abs(p.numpy()).sum()) for p in net.parameters())
print(f"rank {paddle.distributed.get_rank()} acc {result['acc']:.4f} checksum {checksum:.6f}", flush=True)
