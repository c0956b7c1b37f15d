"""The process's peak resident set, as the benchmarks measure it.

/proc/self/status's VmHWM is this process's own high-water mark. The
benchmarks do not use getrusage's ru_maxrss: Linux carries it over from
the process that forked and exec'd this one, so a script started by a
harness holding PyTorch would count the harness's hundreds of MiB.
"""


def peak_rss_kib():
    """VmHWM in KiB (0 where /proc is missing)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak_rss():
    """Restarts VmHWM from the current resident set (clear_refs 5), so
    what follows is measured alone."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
