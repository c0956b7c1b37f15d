#!/usr/bin/python3
"""A training step of dfg beside PyTorch's, on the CPU.

usage: bench/train_vs_torch.py [--bench PATH] [--threads N] [--iterations N]
                               [--warmup N] [--models mlp,cnn]
                               [--onnx-dir DIR]
       bench/train_vs_torch.py --memory [--dfgc PATH] [--threads N]
                               [--models resnet18_32,resnet18_224]
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
peak resident set over the steps (VmHWM, reset before the first step,
minus the RSS then: bench/peak_rss.py), the one measure both sides share,
and the whole process's peak over the steps (the library and runtime
each side loads included). Prints a markdown table.
Needs Debian's python3-torch: run it with /usr/bin/python3 (exits 77
without torch).

--memory compares the memory of one Adam step only, without timing dfg
(a resnet18 step at 224x224 takes minutes on dfg's reference kernels):
dfg's planned arena + weights region (`dfgc plan --training --optimizer
adam --json`), then the same plan with --memory-budget at one third of
that arena (fits or not, the arena reached, the extra FLOPs dfg reports);
PyTorch's parameter bytes plus the peak growth, over its first step (the
one that creates Adam's two moments, which dfg's weights region holds
too), of the bytes malloc has handed out and not taken back (glibc's
mallinfo2 uordblks + hblkhd, PyTorch's CPU allocator being malloc),
sampled after every aten op by a TorchDispatchMode, which sees the
backward's ops as well; the peak RSS growth is printed beside it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peak_rss import peak_rss_kib, reset_peak_rss  # noqa: E402


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


def torch_training_setup(name, threads):
    """The model in training mode, its parameter bytes, Adam, a batch of
    32 (inputs in [0, 1), labels row % 10) and the loss."""
    import torch
    from torch import nn
    torch.set_num_threads(threads)
    model, shape = torch_model(name)
    model.train()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    return (model, params, opt, torch.rand(shape),
            torch.arange(shape[0]) % 10, nn.CrossEntropyLoss())


def torch_worker(name, threads, iterations, warmup):
    import time
    model, params, opt, x, labels, loss_fn = torch_training_setup(name,
                                                                  threads)
    reset_peak_rss()
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
    peak = peak_rss_kib()
    print(json.dumps({"step_ms": statistics.median(times),
                      "min_step_ms": min(times),
                      "param_bytes": params,
                      "rss_growth_bytes": (peak - before) * 1024,
                      "peak_rss_bytes": peak * 1024}))


class MallInfo2:
    """glibc's mallinfo2(): bytes in use from the heap and from mmap."""

    def __init__(self):
        import ctypes
        fields = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                  "fsmblks", "uordblks", "fordblks", "keepcost")

        class Info(ctypes.Structure):
            _fields_ = [(f, ctypes.c_size_t) for f in fields]
        self.libc = ctypes.CDLL("libc.so.6")
        self.libc.mallinfo2.restype = Info

    def in_use(self):
        info = self.libc.mallinfo2()
        return info.uordblks + info.hblkhd


def torch_memory_worker(name, threads):
    from torch.utils._python_dispatch import TorchDispatchMode
    malloc = MallInfo2()

    class PeakAfterEachOp(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.peak = malloc.in_use()
            self.ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.ops += 1
            self.peak = max(self.peak, malloc.in_use())
            return out

    model, params, opt, x, labels, loss_fn = torch_training_setup(name,
                                                                  threads)
    reset_peak_rss()
    rss_before = rss_kib()
    before = malloc.in_use()
    with PeakAfterEachOp() as tracker:
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), labels).backward()
        opt.step()
    peak_rss = peak_rss_kib()
    print(json.dumps({"param_bytes": params, "ops": tracker.ops,
                      "malloc_growth_bytes": tracker.peak - before,
                      "rss_growth_bytes": (peak_rss - rss_before) * 1024}))


def dfg_plan(dfgc, model, classes, budget=None):
    """dfg's plan of one Adam step: the JSON, or the error line."""
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [dfgc, "plan", model, "--training", "--optimizer", "adam",
                   "--classes", str(classes), "--json", out.name]
        if budget:
            command += ["--memory-budget", str(budget)]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            return None, run.stderr.strip().splitlines()[-1]
        with open(out.name) as f:
            return json.load(f), None


def memory_table(a):
    mib = lambda b: "%.1f MiB" % (b / 2**20)
    print("| model | dfg arena + weights region | PyTorch parameters + peak "
          "malloc growth (RSS growth) | dfg / PyTorch | dfg at one third of "
          "its arena |")
    print("| --- | --- | --- | --- | --- |")
    for name in a.models.split(","):
        classes = 10 if name == "resnet18_32" else 1000
        model = os.path.join(a.onnx_dir, name + ".onnx")
        free, error = dfg_plan(a.dfgc, model, classes)
        if error:
            raise SystemExit(error)
        budget = free["arena_bytes"] // 3
        cut, error = dfg_plan(a.dfgc, model, classes, budget)
        t = json.loads(subprocess.run(
            [sys.executable, __file__, "--worker", name, "--memory",
             "--threads", str(a.threads)], check=True, capture_output=True,
            text=True).stdout)
        dfg_total = free["arena_bytes"] + free["weights_bytes"]
        torch_total = t["param_bytes"] + t["malloc_growth_bytes"]
        third = ("fits: arena %s, +%.1f%% FLOPs" % (
            mib(cut["arena_bytes"]), cut["extra_flops_percent"])
            if cut else "does not fit (budget %s): %s" % (mib(budget), error))
        print("| %s | %s + %s = %s | %s + %s = %s (RSS %s) | %.2f | %s |" % (
            name, mib(free["arena_bytes"]), mib(free["weights_bytes"]),
            mib(dfg_total), mib(t["param_bytes"]),
            mib(t["malloc_growth_bytes"]), mib(torch_total),
            mib(t["rss_growth_bytes"]), dfg_total / torch_total, third))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default=os.path.join(HERE, "..", "build", "bench",
                                                    "bench-train-step"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--onnx-dir", default=".")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--dfgc", default=os.path.join(HERE, "..", "build", "tools",
                                                   "dfgc"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker and a.memory:
        return torch_memory_worker(a.worker, a.threads)
    if a.worker:
        return torch_worker(a.worker, a.threads, a.iterations, a.warmup)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is missing (apt-get install python3-torch)")
        return 77
    if a.memory:
        return memory_table(a)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads),
               OPENBLAS_NUM_THREADS=str(a.threads))
    print("| model | dfg step ms | torch step ms | dfg / torch | fastest dfg / "
          "torch ms | dfg arena + weights region | dfg peak RSS growth | "
          "torch parameters + peak RSS growth | dfg planned / torch | "
          "process peak RSS, dfg / torch |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
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
        mib = lambda b: "%.0f" % (b / 2**20)
        print("| %s | %.3f | %.3f | %.2f | %.3f / %.3f | %s + %s | %s | "
              "%s + %s | %.2f | %s / %s MiB (%.2f) |" % (
                  name, d["step_ms"], t["step_ms"], d["step_ms"] / t["step_ms"],
                  d["min_step_ms"], t["min_step_ms"],
                  kib(d["arena_bytes"]), kib(d["weights_bytes"]),
                  kib(d["rss_growth_bytes"]), kib(t["param_bytes"]),
                  kib(t["rss_growth_bytes"]), dfg_planned / torch_total,
                  mib(d["peak_rss_bytes"]), mib(t["peak_rss_bytes"]),
                  d["peak_rss_bytes"] / t["peak_rss_bytes"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
