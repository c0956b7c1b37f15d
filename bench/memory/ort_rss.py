#!/usr/bin/python3
"""ONNX Runtime's side of bench/memory/run.sh: the peak resident memory of
a process that creates one CPU session of MODEL.onnx (THREADS intra-op
threads) and runs it RUNS times on random inputs of the model's shapes.

usage: ort_rss.py MODEL.onnx THREADS RUNS
Prints the peak RSS in MiB (VmHWM, bench/peak_rss.py). Run it with /work/venv/bin/python
or any interpreter that has onnxruntime and numpy.
"""
import os
import sys

import numpy
import onnxruntime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from peak_rss import peak_rss_kib  # noqa: E402


def main(argv):
    path, threads, runs = argv[1], int(argv[2]), int(argv[3])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        path, options, providers=["CPUExecutionProvider"])
    rng = numpy.random.default_rng(1)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if i.type == "tensor(int64)":  # token ids: small ones are valid
            feeds[i.name] = rng.integers(0, 100, shape, dtype=numpy.int64)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(numpy.float32)
    for _ in range(runs):
        session.run(None, feeds)
    print(f"{peak_rss_kib() / 1024.0:.1f}")


if __name__ == "__main__":
    main(sys.argv)
