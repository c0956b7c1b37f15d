#!/usr/bin/python3
"""The peers' side of bench/cpu_speed/run.sh: latency of one model on the
CPU, in this fresh process.

usage: peer_bench.py ort|ort-passive|openvino|torch MODEL.onnx NAME BATCH
                     THREADS ITERATIONS WARMUP
  ort    ONNX Runtime's default CPU session, all graph optimisations on,
         THREADS intra-op threads, on MODEL.onnx (run with /work/venv's
         or any python that has onnxruntime).
  ort-passive  the same with its threads not spinning while they wait
         (session.intra_op.allow_spinning 0), what OMP_WAIT_POLICY=passive
         is to OpenMP.
  openvino  OpenVINO's CPU plugin on MODEL.onnx (pip `openvino`, in the
         same python as onnxruntime): f32 inference precision, the latency
         performance hint, THREADS inference threads.
  torch  PyTorch eager (torch.no_grad) on the model NAME as
         tests/models/export.py builds it, THREADS threads.
Prints one line: "median_ms min_ms peak_rss_mib".
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from peak_rss import peak_rss_kib  # noqa: E402


def random_input(shape, integer):
    """The input a peer is fed: normal floats, or for an integer input
    (token ids) integers in [0, 100), valid indices for any vocabulary."""
    import numpy as np
    rng = np.random.default_rng(1)
    if integer:
        return rng.integers(0, 100, size=shape, dtype=np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def ort_runner(path, threads, spinning):
    import onnxruntime as ort
    options = ort.SessionOptions()
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(path, options,
                                   providers=["CPUExecutionProvider"])
    feed = {}
    for i in session.get_inputs():
        feed[i.name] = random_input(i.shape, i.type == "tensor(int64)")
    return lambda: session.run(None, feed)


def openvino_runner(path, threads):
    import openvino as ov
    core = ov.Core()
    model = core.read_model(path)
    compiled = core.compile_model(model, "CPU", {
        "INFERENCE_PRECISION_HINT": "f32",
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_NUM_THREADS": threads,
    })
    request = compiled.create_infer_request()
    feed = {}
    for port in compiled.inputs:
        feed[port.any_name] = random_input(
            list(port.shape), port.element_type == ov.Type.i64)
    return lambda: request.infer(feed)


def torch_runner(name, batch, threads):
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                    "tests", "models"))
    import export
    torch.set_num_threads(threads)
    model = export.make_model(name).eval()
    x = export.example_input(name, batch)

    def run():
        with torch.no_grad():
            model(x)
    return run


def main(argv):
    peer, path, name = argv[1], argv[2], argv[3]
    batch, threads, iterations, warmup = map(int, argv[4:8])
    if peer == "torch":
        run = torch_runner(name, batch, threads)
    elif peer == "openvino":
        run = openvino_runner(path, threads)
    else:
        run = ort_runner(path, threads, peer == "ort")
    times = []
    for i in range(warmup + iterations):
        start = time.perf_counter()
        run()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
    peak = peak_rss_kib() / 1024.0
    print(f"{statistics.median(times):.2f} {min(times):.2f} {peak:.0f}")


if __name__ == "__main__":
    main(sys.argv)
