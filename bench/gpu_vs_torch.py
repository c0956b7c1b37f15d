#!/usr/bin/python3
"""dfg beside PyTorch on the same GPU: torchvision resnet50 in inference.

usage: bench/gpu_vs_torch.py [--dfgc PATH] [--batches 1,32] [--dtypes f32,f16]
                             [--iterations N] [--warmup N] [--work-dir DIR]

For each batch size and dtype, the model is exported from torch to ONNX
(opset 13, batch norms folded, f16 by model.half()) and run by
`dfgc bench MODEL.onnx --device cuda`, then by PyTorch on the same GPU in
inference mode (batch norms folded the same way), each in a fresh process.
Both sides time one run with the input copied to the device and the
output copied back (as dfg_session_run does), PyTorch with a
torch.cuda.synchronize() before the clock stops. Prints a markdown table
of median latencies and the ratio dfg / torch (below 1: dfg is faster).

Needs Debian's python3-torch and python3-torchvision with CUDA; exits 77,
saying why, when torch or a CUDA device is missing.
"""
import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = "resnet50"


def build_model(dtype):
    import torch
    import torchvision
    torch.manual_seed(1)
    model = torchvision.models.resnet50(weights=None).eval()
    from torch.fx.experimental.optimization import fuse
    model = fuse(model)  # as torch.onnx.export folds them
    return model.half() if dtype == "f16" else model


def export(batch, dtype, path):
    import torch
    model = build_model(dtype)
    x = torch.randn(batch, 3, 224, 224)
    x = x.half() if dtype == "f16" else x
    if dtype == "f16":  # f16 convolutions need the GPU to trace
        model, x = model.cuda(), x.cuda()
    legacy = ({"dynamo": False} if "dynamo" in  # PyTorch 2.9+'s default
              inspect.signature(torch.onnx.export).parameters else {})
    torch.onnx.export(model, x, path, opset_version=13, input_names=["x"],
                      output_names=["y"], do_constant_folding=True, **legacy)


def torch_worker(batch, dtype, iterations, warmup):
    import time
    import torch
    model = build_model(dtype).cuda()
    x = torch.randn(batch, 3, 224, 224)
    x = (x.half() if dtype == "f16" else x).pin_memory()
    times = []
    with torch.inference_mode():
        for i in range(warmup + iterations):
            start = time.perf_counter()
            model(x.cuda(non_blocking=True)).cpu()
            torch.cuda.synchronize()
            if i >= warmup:
                times.append(time.perf_counter() - start)
    print(json.dumps({"median_ms": statistics.median(times) * 1e3,
                      "device": torch.cuda.get_device_name(0)}))


def check_torch():
    import torch
    if not torch.cuda.is_available():
        print("no CUDA device for PyTorch")
        sys.exit(77)


def worker(*arguments):
    """This script in a fresh process (one CUDA context per measurement)."""
    return subprocess.run([sys.executable, os.path.abspath(__file__)] +
                          list(arguments), check=True, capture_output=True,
                          text=True).stdout


def run_dfg(dfgc, model, iterations, warmup):
    out = subprocess.run([dfgc, "bench", model, "--device", "cuda",
                          "--iterations", str(iterations), "--warmup",
                          str(warmup)], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if line.startswith("median"):
            return float(line.split()[1])
    raise RuntimeError("no median in dfgc bench output:\n" + out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dfgc", default=os.path.join(
        HERE, "..", "build", "tools", "dfgc"))
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--dtypes", default="f32,f16")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--work-dir", help="where the ONNX exports are kept")
    parser.add_argument("--torch-worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--export", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--check-torch", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.check_torch:
        return check_torch()
    if args.export:
        return export(int(args.export[0]), args.export[1], args.export[2])
    if args.torch_worker:
        return torch_worker(int(args.torch_worker[0]), args.torch_worker[1],
                            args.iterations, args.warmup)
    try:
        worker("--check-torch")
    except subprocess.CalledProcessError as e:
        print(f"skipped: {(e.stdout or e.stderr).strip() or 'no torch'}")
        return 77
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="dfg-gpu-bench-")
    print("| model | batch | dtype | dfg ms | torch ms | dfg / torch |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    device = None
    for batch in [int(b) for b in args.batches.split(",")]:
        for dtype in args.dtypes.split(","):
            path = os.path.join(work_dir, f"{MODEL}_b{batch}_{dtype}.onnx")
            if not os.path.exists(path):
                worker("--export", str(batch), dtype, path)
            dfg_ms = run_dfg(args.dfgc, path, args.iterations, args.warmup)
            torch = json.loads(worker(
                "--torch-worker", str(batch), dtype, "--iterations",
                str(args.iterations), "--warmup", str(args.warmup)))
            device = torch["device"]
            print(f"| {MODEL} | {batch} | {dtype} | {dfg_ms:.3f} | "
                  f"{torch['median_ms']:.3f} | "
                  f"{dfg_ms / torch['median_ms']:.2f} |", flush=True)
    print(f"\ndevice: {device}; {args.iterations} timed runs after "
          f"{args.warmup}, median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
