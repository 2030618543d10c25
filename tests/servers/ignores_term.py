"""A stdio server that ignores SIGTERM and SIGHUP and never answers: the
server a proxy or call must still be able to end (tests/it/server_lifetime.rs).
Writes its pid to argv[1] (atomically) once the signals are ignored."""
import os
import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
tmp = sys.argv[1] + ".tmp"
with open(tmp, "w") as f:
    f.write(str(os.getpid()))
os.rename(tmp, sys.argv[1])
while True:
    time.sleep(3600)
