#!/usr/bin/env python3
"""interrupt.py N COMMAND...: runs COMMAND in a session of its own with
SIGINT at its default action (as a terminal's foreground job), waits for
it to print "ready", then sends SIGINT to its whole process group N times,
waiting for "caught" between two; exits with the command's status (128 +
the signal that killed it). With SIGNAL=TERM in the environment, sends
SIGTERM to COMMAND alone instead; with SIGNAL=HUP, starts COMMAND with
SIGHUP ignored (as nohup does) and sends it SIGHUP before the SIGINTs."""
import os
import signal
import subprocess
import sys
import time


def sigint_pending(pid):
    """Whether SIGINT waits to be taken by pid: a second one sent then
    would merge with it."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("SigPnd:", "ShdPnd:")) and int(line.split()[1], 16) & 2:
                return True
    return False


def dispositions():
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if os.environ.get("SIGNAL") == "HUP":
        signal.signal(signal.SIGHUP, signal.SIG_IGN)


count = int(sys.argv[1])
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, start_new_session=True,
                     preexec_fn=dispositions)
if p.stdout.readline() != b"ready\n":
    sys.exit("interrupt.py: no ready")
if os.environ.get("SIGNAL") == "HUP":
    os.kill(p.pid, signal.SIGHUP)
for k in range(count):
    if os.environ.get("SIGNAL") == "TERM":
        os.kill(p.pid, signal.SIGTERM)
    else:
        os.killpg(p.pid, signal.SIGINT)
    if k + 1 < count:
        if p.stdout.readline() != b"caught\n":
            sys.exit("interrupt.py: no caught")
        while sigint_pending(p.pid):
            time.sleep(0.01)
p.stdout.read()
status = p.wait()
sys.exit(128 - status if status < 0 else status)
