"""Launcher test script: prints its role environment as one JSON line; servers then wait forever, like a
pserver that is never told to stop. argv[1] is the test's marker (it only tags the process)."""

import json
import os
import sys
import time

NAMES = (
    "TRAINING_ROLE PADDLE_TRAINING_ROLE PADDLE_PSERVERS_IP_PORT_LIST PADDLE_TRAINER_ENDPOINTS PADDLE_TRAINERS_NUM "
    "PADDLE_TRAINERS PADDLE_TRAINER_ID PADDLE_PORT POD_IP PADDLE_CURRENT_ENDPOINT PADDLE_CURRENT_IP "
    "PADDLE_PSERVER_IPS PADDLE_PSERVER_PORT FLAGS_selected_gpus"
).split()

print("ENV " + json.dumps({k: os.environ[k] for k in NAMES if k in os.environ}, sort_keys=True))
print("ARGS " + " ".join(sys.argv[1:]))
sys.stdout.flush()
if os.environ.get("TRAINING_ROLE") == "PSERVER":
    while True:
        time.sleep(1)
