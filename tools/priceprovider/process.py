"""The provider as a child process of another tool (`make run`'s nomrun, the experiment runner):
its command line, waiting until it listens, and stopping it by the PID the caller started."""
import os
import subprocess
import sys
import time

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # run with cwd=TOOLS


class ProviderDidNotStart(RuntimeError):
    pass


def command(bind, port, schedule=None, hold=False):
    """argv of `python3 -m priceprovider`, to be run with cwd=TOOLS."""
    argv = [sys.executable, "-m", "priceprovider", "--bind", bind, "--port", str(port)]
    if hold:
        argv.append("--hold")
    if schedule:
        argv += ["--schedule", schedule]
    return argv


def wait_listening(proc, log_path, timeout_s=15.0):
    """Returns the provider's "listening on" line once its log (stdout) shows it: its signal
    handlers (--hold's SIGUSR1/SIGUSR2) are installed by then. Raises ProviderDidNotStart with
    the log if the process ended first or timeout_s passed; the caller still stops it."""
    deadline = time.monotonic() + timeout_s
    while True:
        with open(log_path) as f:
            text = f.read()
        for line in text.splitlines():
            if "listening on" in line:
                return line.strip()
        if proc.poll() is not None or time.monotonic() > deadline:
            raise ProviderDidNotStart(text.strip() or f"exit status {proc.poll()}, no output")
        time.sleep(0.05)


def stop(proc, grace_s=10.0):
    """SIGTERM, then SIGKILL after grace_s; nothing if it already ended. Never raises."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
