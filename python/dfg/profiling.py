"""Profiling a session as ONNX Runtime's enable_profiling does: each run
timed step by step, and end_profiling() writing the steps' mean times as
the Perfetto trace `dfgc bench --trace` writes (dfg_report_step_trace)."""
import threading
import time

from . import _dfg


class StepProfile:
    """The step times of the runs profiled so far, summed (runs on many
    threads add to it one at a time)."""

    def __init__(self, prefix):
        self.prefix = str(prefix)
        self._lock = threading.Lock()
        self._sums, self._runs = None, 0

    def add(self, step_seconds):
        with self._lock:
            if self._sums is None:
                self._sums = [0.0] * len(step_seconds)
            self._sums = [a + b for a, b in zip(self._sums, step_seconds)]
            self._runs += 1

    def write(self, handle):
        """Writes the trace of the mean step times to PREFIX_DATE.json
        (the old file replaced only by the whole new one), starts over,
        and returns the path."""
        with self._lock:
            if not self._runs:
                raise ValueError("end_profiling: no run was profiled since "
                                 "the session began or the last "
                                 "end_profiling()")
            means = [s / self._runs for s in self._sums]
            self._sums, self._runs = None, 0
        text = handle.step_trace(means)
        path = f"{self.prefix}_{time.strftime('%Y-%m-%d_%H-%M-%S')}.json"
        _dfg.write_file(path, text.encode("utf-8"))
        return path
