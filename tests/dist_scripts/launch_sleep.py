"""Launcher test script: starts a grandchild that sleeps (same process group), prints 'ready', then sleeps.
argv[1] is the test's marker, passed on to the grandchild; with argv[2] == 'ignore-term' SIGTERM is ignored."""

import signal
import subprocess
import sys
import time

marker = sys.argv[1]
if sys.argv[2:] == ["ignore-term"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
print("ready", flush=True)
while True:
    time.sleep(1)
