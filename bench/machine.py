"""machine.py - what the benchmark scripts say about the machine they ran
on (bench/run.py, bench/peers_report.py)."""
import re


def cpu_model(default="?"):
    """The CPU's model name from /proc/cpuinfo, or default."""
    try:
        with open("/proc/cpuinfo") as f:
            return re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
    except (OSError, AttributeError):
        return default
