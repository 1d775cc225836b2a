"""Launcher test script: worker 1 prints 30 numbered lines and exits 3; every other process waits forever.
argv[1] is the test's marker (it only tags the process)."""

import os
import sys
import time

if os.environ.get("TRAINING_ROLE") == "TRAINER" and os.environ.get("PADDLE_TRAINER_ID") == "1":
    for i in range(30):
        print(f"worker 1 line {i}")
    print("worker 1 is failing on purpose", flush=True)
    sys.exit(3)
print("waiting", flush=True)
while True:
    time.sleep(1)
