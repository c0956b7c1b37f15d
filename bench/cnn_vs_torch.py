#!/usr/bin/python3
"""dfg beside PyTorch on the same convolutional networks, on the CPU.

usage: bench/cnn_vs_torch.py [--dfgc PATH] [--threads N] [--iterations N]
                             [--warmup N] [--repeats N] [--models A,B,...]
                             [--work-dir DIR]

For each model, `dfgc bench` (median latency of dfg_session_run, peak RSS,
arena bytes) and PyTorch running the same network in inference mode, each
in a fresh process, with the same number of threads (OMP_NUM_THREADS for
dfg, torch.set_num_threads for PyTorch). Each side is measured --repeats
times, alternating, and the median of the medians is reported: the machine
may be shared. Prints a markdown table with the ratios dfg / torch.

Models:
  cnn            example:cnn, the bundled residual CNN ([32,1,8,8];
                 src/models/cnn.c), rebuilt layer for layer in torch
  cnn_wide       the same architecture at [8,3,64,64] with 32/64/64
                 channels, exported from torch to ONNX for dfg
  resnet18       torchvision resnet18, [1,3,224,224], through ONNX
  mobilenet_v2   torchvision mobilenet_v2, [1,3,224,224], through ONNX
                 (depthwise convolutions)
The ONNX models carry torch's weights, so both sides run the very same
network; the bundled cnn has dfg's own random weights (timing does not
depend on the values). torch.onnx.export folds each batch norm into the
convolution before it, so for those models the torch side runs with the
same folding (torch.fx.experimental.optimization.fuse); example:cnn keeps
its batch norms on both sides.

Needs Debian's python3-torch (and python3-torchvision for the torchvision
models); run it with /usr/bin/python3. Exits 77 when torch is missing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from peak_rss import peak_rss_kib

HERE = os.path.dirname(os.path.abspath(__file__))
ALL_MODELS = ["cnn", "cnn_wide", "resnet18", "mobilenet_v2"]


def build_torch_model(name):
    """The torch module and its input shape for a model name."""
    import torch
    from torch import nn

    if name in ("cnn", "cnn_wide"):
        # src/models/cnn.c: dfg_model_conv_bn is conv (no bias, pad k/2)
        # + batch norm (+ relu); residual_block adds a 1x1 strided conv_bn
        # on the skip path when the stride or the channel count changes.
        def conv_bn(cin, cout, k, stride, relu):
            layers = [nn.Conv2d(cin, cout, k, stride, k // 2, bias=False),
                      nn.BatchNorm2d(cout, eps=1e-5)]
            return nn.Sequential(*layers, nn.ReLU()) if relu else nn.Sequential(*layers)

        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.a = conv_bn(cin, cout, 3, stride, True)
                self.b = conv_bn(cout, cout, 3, 1, False)
                self.skip = (conv_bn(cin, cout, 1, stride, False)
                             if stride != 1 or cin != cout else nn.Identity())

            def forward(self, x):
                return torch.relu(self.b(self.a(x)) + self.skip(x))

        batch, cin, size, c1, c2, classes = (
            (32, 1, 8, 16, 32, 10) if name == "cnn" else (8, 3, 64, 32, 64, 10))
        model = nn.Sequential(
            conv_bn(cin, c1, 3, 1, True), Block(c1, c1, 1), Block(c1, c2, 2),
            Block(c2, c2, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(1),
            nn.Linear(c2, classes), nn.Softmax(dim=1))
        shape = [batch, cin, size, size]
    else:
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        shape = [1, 3, 224, 224]
    torch.manual_seed(1)
    for module in model.modules():  # non-trivial batch norm statistics
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
    return model.eval(), shape


def torch_worker(name, threads, iterations, warmup):
    """Runs in its own process: prints one JSON line of measurements."""
    import time
    import torch

    torch.set_num_threads(threads)
    model, shape = build_torch_model(name)
    if name != "cnn":  # as exported to ONNX: batch norms folded
        from torch.fx.experimental.optimization import fuse
        model = fuse(model)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    rss_before = peak_rss_kib()
    times = []
    with torch.inference_mode():
        for i in range(warmup + iterations):
            start = time.perf_counter()
            model(x)
            if i >= warmup:
                times.append(time.perf_counter() - start)
    times.sort()
    peak = peak_rss_kib()
    print(json.dumps({"median_ms": statistics.median(times) * 1e3,
                      "min_ms": times[0] * 1e3,
                      "peak_rss_mib": peak / 1024.0,
                      "run_rss_mib": (peak - rss_before) / 1024.0}))


def export_onnx(name, path):
    import torch
    model, shape = build_torch_model(name)
    x = torch.randn(*shape)
    torch.onnx.export(model, x, path, opset_version=13, input_names=["x"],
                      output_names=["y"], do_constant_folding=True)


def worker(*arguments):
    """This script in a fresh process: the parent never imports torch, as
    Linux keeps a process's peak RSS across fork and exec, so a parent
    holding torch would inflate every child's peak RSS."""
    return subprocess.run([sys.executable, os.path.abspath(__file__)] +
                          list(arguments), check=True, capture_output=True,
                          text=True).stdout


def dfg_model_argument(name, work_dir):
    if name == "cnn":
        return "example:cnn"
    path = os.path.join(work_dir, name + ".onnx")
    if not os.path.exists(path):
        worker("--export", name, path)
    return path


def run_dfg(dfgc, model, threads, iterations, warmup):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([dfgc, "bench", model, "--iterations",
                          str(iterations), "--warmup", str(warmup)],
                         env=env, check=True, capture_output=True,
                         text=True).stdout
    fields = {}
    for line in out.splitlines():
        key, _, value = line.partition(" ")
        fields[key if key != "peak" else "peak_rss"] = value.split()
    return {"median_ms": float(fields["median"][0]),
            "min_ms": float(fields["min"][0]),
            "arena_mib": int(fields["arena"][0]) / 2**20,
            "peak_rss_mib": float(fields["peak_rss"][1])}


def run_torch(name, threads, iterations, warmup):
    out = worker("--torch-worker", name, "--threads", str(threads),
                 "--iterations", str(iterations), "--warmup", str(warmup))
    return json.loads(out.strip().splitlines()[-1])


def median_of(runs, key):
    return statistics.median(run[key] for run in runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dfgc", default=os.path.join(
        HERE, "..", "build", "tools", "dfgc"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default=",".join(ALL_MODELS))
    parser.add_argument("--work-dir", help="where the ONNX exports are kept")
    parser.add_argument("--torch-worker", help=argparse.SUPPRESS)
    parser.add_argument("--export", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--check-torch", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.check_torch:
        import torch  # noqa: F401
        return 0
    if args.torch_worker:
        torch_worker(args.torch_worker, args.threads, args.iterations,
                     args.warmup)
        return 0
    if args.export:
        export_onnx(*args.export)
        return 0
    try:
        worker("--check-torch")
    except subprocess.CalledProcessError as error:
        print(f"python3-torch not importable ({error.stderr.strip()}); "
              "skipping", file=sys.stderr)
        return 77
    models = args.models.split(",")
    for name in models:
        if name not in ALL_MODELS:
            parser.error(f"unknown model {name} (known: {', '.join(ALL_MODELS)})")
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="dfg-bench-")
    os.makedirs(work_dir, exist_ok=True)
    print(f"threads {args.threads}, {args.iterations} iterations after "
          f"{args.warmup} warmup, median of {args.repeats} repeats; "
          f"load average {os.getloadavg()[0]:.1f}\n")
    print("| model | dfg ms | torch ms | dfg/torch | dfg peak RSS MiB | "
          "torch peak RSS MiB (run) | dfg/torch | dfg arena MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in models:
        model = dfg_model_argument(name, work_dir)
        dfg_runs, torch_runs = [], []
        for _ in range(args.repeats):
            dfg_runs.append(run_dfg(args.dfgc, model, args.threads,
                                    args.iterations, args.warmup))
            torch_runs.append(run_torch(name, args.threads, args.iterations,
                                        args.warmup))
        d_ms, t_ms = median_of(dfg_runs, "median_ms"), median_of(torch_runs, "median_ms")
        d_rss = median_of(dfg_runs, "peak_rss_mib")
        t_rss = median_of(torch_runs, "peak_rss_mib")
        t_run = median_of(torch_runs, "run_rss_mib")
        print(f"| {name} | {d_ms:.2f} | {t_ms:.2f} | {d_ms / t_ms:.2f} | "
              f"{d_rss:.1f} | {t_rss:.1f} ({t_run:.1f}) | {d_rss / t_rss:.2f} | "
              f"{median_of(dfg_runs, 'arena_mib'):.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
