"""Program.bench(): the figures `dfgc bench` prints and writes with --json
(docs/bench-json.md), under the same names, computed the same way."""
import time

import numpy as np

from . import _dfg

# p99 / median above this: the runs were not alike (other load on the
# machine, frequency scaling, ...) and the mean says little.
SPREAD_WARNING_RATIO = 1.5


def latency_figures(seconds, batch):
    """The latency statistics of runs lasting `seconds` each, in
    milliseconds, and the throughput: runs/s and samples/s (batch samples
    per run). Percentiles interpolate linearly between ranks, as
    numpy.percentile does by default (and dfgc bench)."""
    ms = np.sort(np.asarray(seconds, dtype=np.float64)) * 1e3
    mean = float(ms.mean())
    figures = {
        "mean_ms": mean,
        "median_ms": float(np.percentile(ms, 50)),
        "p90_ms": float(np.percentile(ms, 90)),
        "p95_ms": float(np.percentile(ms, 95)),
        "p99_ms": float(np.percentile(ms, 99)),
        "min_ms": float(ms[0]),
        "max_ms": float(ms[-1]),
        "runs_per_second": 1e3 / mean if mean > 0 else 0.0,
        "samples_per_second": batch * 1e3 / mean if mean > 0 else 0.0,
    }
    median = figures["median_ms"]
    figures["p99_over_median"] = figures["p99_ms"] / median if median else 0.0
    figures["warning"] = (
        f"p99 is {figures['p99_over_median']:.2f} x the median: the runs "
        "were not alike (other load, frequency scaling); the mean says little"
        if figures["p99_over_median"] > SPREAD_WARNING_RATIO else None)
    return figures


def _default_inputs(program, seed):
    """Standard normal floats, zeros for integers (valid indices)."""
    rng = np.random.default_rng(seed)
    return {s.name: (rng.standard_normal(s.shape).astype(s.numpy_dtype)
                     if s.numpy_dtype.kind == "f"
                     else np.zeros(s.shape, dtype=s.numpy_dtype))
            for s in program.inputs}


def bench(program, iterations=100, warmup=10, device="cpu", inputs=None,
          seed=1):
    """Runs program `warmup` times untimed, then `iterations` times timed
    (each run timed in C, inputs copied in and outputs out included), on
    `inputs` ({name: array}) or random ones; returns a dict of the figures
    dfgc bench --json writes (docs/bench-json.md)."""
    from .session import Session
    if int(iterations) < 1:
        raise ValueError(f"iterations must be at least 1, not {iterations}")
    if int(warmup) < 0:
        raise ValueError(f"warmup must be at least 0, not {warmup}")
    start = time.perf_counter()
    session = Session(program, device)
    session_seconds = time.perf_counter() - start
    try:
        feed = _default_inputs(program, seed) if inputs is None else inputs
        arrays, outputs = session._buffers(feed, {})
        session._handle.time_runs(arrays, outputs, int(warmup))
        seconds = session._handle.time_runs(arrays, outputs, int(iterations))
    finally:
        session.close()
    first = program.inputs[0].shape if program.inputs else ()
    batch = int(first[0]) if first else 1
    stats = program.stats
    info = _dfg.backend_info(str(device))
    report = {
        "model": program.source,
        "backend": str(device),
        "device": info["device"],
        "threads": info["threads"],
        "iterations": int(iterations),
        "warmup": int(warmup),
        "batch": batch,
        "compile_ms": program.compile_seconds * 1e3,
        "session_ms": session_seconds * 1e3,
        "arena_bytes": stats["arena_bytes"],
        "weights_bytes": stats["weights_bytes"],
    }
    report.update(latency_figures(seconds, batch))
    return report
