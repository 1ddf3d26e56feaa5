#!/usr/bin/env python3
"""terminal.py COMMAND...: runs COMMAND on a terminal of its own as its
foreground job, waits for "ready" on it, then types Ctrl-C (the terminal
sends SIGINT to the whole foreground process group); prints what the
terminal showed (lines ending in \\n) and exits with COMMAND's status (128
+ the signal that killed it)."""
import os
import pty
import signal
import sys

pid, master = pty.fork()
if pid == 0:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.execvp(sys.argv[1], sys.argv[1:])
shown = b""
typed = False
while True:
    try:
        data = os.read(master, 4096)
    except OSError:  # EIO: the terminal's last writer has gone
        break
    if not data:
        break
    shown += data
    if not typed and b"ready" in shown:
        os.write(master, b"\x03")
        typed = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(shown.decode(errors="replace").replace("\r\n", "\n"))
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
