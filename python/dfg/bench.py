"""Program.bench(): the figures `dfgc bench` prints and writes with --json
(docs/bench-json.md), under the same names and computed by the same C
code (include/dfg/bench.h)."""
import json
import time

import numpy as np

from . import _dfg


def _default_inputs(program, seed):
    """Standard normal floats, zeros for integers (valid indices)."""
    rng = np.random.default_rng(seed)
    return {s.name: (rng.standard_normal(s.shape).astype(s.numpy_dtype)
                     if s.numpy_dtype.kind == "f"
                     else np.zeros(s.shape, dtype=s.numpy_dtype))
            for s in program.inputs}


def figures(program, seconds, device="cpu", warmup=0, session_seconds=0.0,
            threads=0):
    """dfgc bench's report for runs of program on device lasting
    `seconds` each (a list), with threads CPU threads (0: the calling
    thread's default): {"mean_ms": ..., "p99_ms": ...,
    "runs_per_second": ..., "warning": None or its line, ...}."""
    first = program.inputs[0].shape if program.inputs else ()
    stats = program.stats
    text = _dfg.bench_report(
        program.source, str(device), len(seconds), int(warmup),
        int(first[0]) if first else 1, float(program.compile_seconds),
        float(session_seconds), stats["arena_bytes"], stats["weights_bytes"],
        list(seconds), int(threads))
    return json.loads(text)


def bench(program, iterations=100, warmup=10, device="cpu", inputs=None,
          seed=1, threads=None):
    """Runs program `warmup` times untimed, then `iterations` times timed
    (each run timed in C, inputs copied in and outputs out included), on
    `inputs` ({name: array}) or random ones; returns figures()."""
    if int(iterations) < 1:
        raise ValueError(f"iterations must be at least 1, not {iterations}")
    if int(warmup) < 0:
        raise ValueError(f"warmup must be at least 0, not {warmup}")
    start = time.perf_counter()
    session = program.session(device, threads=threads)
    session_seconds = time.perf_counter() - start
    try:
        feed = _default_inputs(program, seed) if inputs is None else inputs
        arrays, outputs = session._buffers(feed, {})
        session._handle.time_runs(arrays, outputs, int(warmup))
        seconds = session._handle.time_runs(arrays, outputs, int(iterations))
    finally:
        session.close()
    return figures(session.program, seconds, device, warmup, session_seconds,
                   threads or 0)
