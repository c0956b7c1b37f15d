#!/usr/bin/python3
"""A training step of dfg beside PyTorch's, on the CPU.

usage: bench/train_vs_torch.py [--bench PATH] [--threads N] [--iterations N]
                               [--warmup N] [--models mlp,cnn]
                               [--onnx-dir DIR]

One training step = forward, softmax cross-entropy, backward and an Adam
update (lr 0.003), batch 32, on the bundled mlp and cnn (src/models/,
rebuilt layer for layer in torch) and on torchvision's resnet18 at 32x32
with 10 classes (resnet18_32) and at 224x224 with 1000 (resnet18_224),
which dfg reads from DIR/resnet18_32.onnx and DIR/resnet18_224.onnx
(bench/export_resnet18.py writes them). Batch norms train with batch
statistics on both sides. dfg runs build/bench/bench-train-step; torch runs in a fresh
process with torch.set_num_threads(N) (dfg: OMP_NUM_THREADS=N). Memory:
dfg's planned bytes (arena + weights region, which holds the weights,
the optimizer state and the accumulators), and for both the growth of the
peak resident set over the steps (ru_maxrss minus the RSS before the
first step), the one measure both sides share. Prints a markdown table.
Needs Debian's python3-torch: run it with /usr/bin/python3 (exits 77
without torch).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def torch_model(name):
    from torch import nn
    if name.startswith("resnet18_"):
        import torchvision
        size = int(name.split("_")[1])
        classes = 10 if size == 32 else 1000
        return (torchvision.models.resnet18(num_classes=classes),
                (32, 3, size, size))
    if name == "mlp":
        return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64),
                             nn.ReLU(), nn.Linear(64, 10)), (32, 64)
    from cnn_vs_torch import build_torch_model
    model, _ = build_torch_model("cnn")
    # build_torch_model ends in a softmax for inference; train on logits.
    if isinstance(model[-1], nn.Softmax):
        model = model[:-1]
    return model, (32, 1, 8, 8)


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def torch_worker(name, threads, iterations, warmup):
    import resource
    import time
    import torch
    from torch import nn
    torch.set_num_threads(threads)
    model, shape = torch_model(name)
    model.train()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    x = torch.rand(shape)
    labels = torch.arange(32) % 10
    loss_fn = nn.CrossEntropyLoss()
    before = rss_kib()
    times = []
    for i in range(warmup + iterations):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), labels)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"step_ms": statistics.median(times),
                      "min_step_ms": min(times),
                      "param_bytes": params,
                      "rss_growth_bytes": (peak - before) * 1024}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(HERE, "..", "build", "bench",
                                                    "bench-train-step"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--onnx-dir", default=".")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return torch_worker(a.worker, a.threads, a.iterations, a.warmup)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is missing (apt-get install python3-torch)")
        return 77
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads),
               OPENBLAS_NUM_THREADS=str(a.threads))
    print("| model | dfg step ms | torch step ms | dfg / torch | fastest dfg / "
          "torch ms | dfg arena + weights region | dfg peak RSS growth | "
          "torch parameters + peak RSS growth | dfg planned / torch |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in a.models.split(","):
        model = (os.path.join(a.onnx_dir, name + ".onnx")
                 if name.startswith("resnet18_") else name)
        d = json.loads(subprocess.run(
            [a.bench, model, "adam", str(a.iterations), str(a.warmup)],
            env=env, check=True, capture_output=True, text=True).stdout)
        t = json.loads(subprocess.run(
            [sys.executable, __file__, "--worker", name, "--threads",
             str(a.threads), "--iterations", str(a.iterations), "--warmup",
             str(a.warmup)], env=env, check=True, capture_output=True,
            text=True).stdout)
        kib = lambda b: "%.0f KiB" % (b / 1024)
        dfg_planned = d["arena_bytes"] + d["weights_bytes"]
        torch_total = t["param_bytes"] + t["rss_growth_bytes"]
        print("| %s | %.3f | %.3f | %.2f | %.3f / %.3f | %s + %s | %s | "
              "%s + %s | %.2f |" % (
                  name, d["step_ms"], t["step_ms"], d["step_ms"] / t["step_ms"],
                  d["min_step_ms"], t["min_step_ms"],
                  kib(d["arena_bytes"]), kib(d["weights_bytes"]),
                  kib(d["rss_growth_bytes"]), kib(t["param_bytes"]),
                  kib(t["rss_growth_bytes"]), dfg_planned / torch_total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
