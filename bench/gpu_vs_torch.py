#!/usr/bin/python3
"""dfg beside PyTorch on the same GPU: time per run and peak device memory.

usage: bench/gpu_vs_torch.py [--dfgc PATH] [--train-step PATH]
                             [--cases LIST] [--iterations N]
                             [--warmup N] [--work-dir DIR] [--no-compile]

Cases (--cases, comma-separated; all by default): resnet50 at batch 1 and
32 in f32 and f16 (rn50_b1_f32, rn50_b32_f32, rn50_b1_f16, rn50_b32_f16)
and a 4-layer BERT-base-like encoder at sequence 128, batch 1 and 8, f32
(bert_b1_f32, bert_b8_f32), and one training step of torchvision's
resnet18 (224x224, 1000 classes) at batch 64 (r18_train_b64_f32). Each
inference model is exported from torch to ONNX
(opset 13, batch norms folded; f16 by model.half()) and run by
`dfgc bench MODEL.onnx --device cuda`, then by PyTorch on the same GPU in
inference mode, eager and through torch.compile (default mode), each in a
fresh process. Every side times one run with the input copied to the
device and the output copied back (as dfg_session_run does), PyTorch with
a torch.cuda.synchronize() before the clock stops.

The training step: forward, softmax cross-entropy, backward and an Adam
update (lr 0.003), batch norms on batch statistics, the batch (x and the
labels) copied to the device at every step. dfg runs
`bench-train-step --device cuda` (bench/train_step.c) on resnet18 exported
with random batch-norm parameters (so that no two layers' initializers
are merged into one); PyTorch runs the same step eagerly (its compiled
column is n/a: torch.compile of a training step takes minutes).

Math: dfg's f32 is strict FP32 (cuBLAS CUBLAS_COMPUTE_32F); the "dfg
tf32 ms" column runs the same f32 model compiled with `--precision tf32`
(cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32, cuDNN tensor-op math; n/a for the
f16 models and the training step); "dfg f16 ms (MiB)" runs it compiled
with `--precision f16` (every tensor 16-bit, weights included, products
on tensor cores: docs/precision.md), as PyTorch's autocast or TensorRT's
fp16 mode would. PyTorch runs with its defaults, stated
in the table's notes: TF32 convolutions (torch.backends.cudnn.allow_tf32)
and FP32 matrix products (torch.backends.cuda.matmul.allow_tf32 off).

Memory: dfg's is the plan's device bytes (arena with its workspaces, plus
weights: `dfgc bench`'s arena and weights lines); PyTorch's is
torch.cuda.max_memory_reserved() over the whole process (weights, caching
allocator). Prints a markdown table: median ms of each side, dfg / eager
and dfg / compiled (below 1: dfg is faster), MiB of each side.

Needs torch (and torchvision) with CUDA; exits 77, saying why, when torch
or a CUDA device is missing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))

# name: (model, batch, dtype)
CASES = {
    "rn50_b1_f32": ("resnet50", 1, "f32"),
    "rn50_b32_f32": ("resnet50", 32, "f32"),
    "rn50_b1_f16": ("resnet50", 1, "f16"),
    "rn50_b32_f16": ("resnet50", 32, "f16"),
    "bert_b1_f32": ("bert_encoder", 1, "f32"),
    "bert_b8_f32": ("bert_encoder", 8, "f32"),
    "r18_train_b64_f32": ("resnet18_train", 64, "f32"),
}
TRAIN_LR = 0.003


def timed(step, iterations, warmup):
    """Seconds of each of the timed calls of step, the device synchronised
    before the clock stops."""
    import time
    import torch
    times = []
    for i in range(warmup + iterations):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return times


def report_torch(times):
    """PyTorch's figures as one JSON line."""
    import torch
    print(json.dumps({
        "median_ms": statistics.median(times) * 1e3,
        "mib": torch.cuda.max_memory_reserved() / 2**20,
        "device": torch.cuda.get_device_name(0),
        "tf32": f"conv {torch.backends.cudnn.allow_tf32}, "
                f"matmul {torch.backends.cuda.matmul.allow_tf32}"}))


def train_model():
    import torch
    import torchvision
    import export as exporter
    torch.manual_seed(1)
    model = torchvision.models.resnet18(num_classes=1000)
    with torch.no_grad():
        exporter.randomize_batch_norms(model)
    return model


def train_batch(batch):
    """x in [0, 1) as bench-train-step's pattern, labels row % 10."""
    import torch
    i = torch.arange(batch * 3 * 224 * 224)
    x = (((i * 37) % 17).float() / 16.0).reshape(batch, 3, 224, 224)
    return x, torch.arange(batch) % 10


def export_train(batch, path):
    import torch
    import export as exporter
    model, (x, _) = train_model().eval(), train_batch(batch)
    torch.onnx.export(model, x, path, opset_version=13, input_names=["x"],
                      output_names=["logits"],
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False,
                      **exporter.torchscript_exporter())


def torch_train_worker(batch, iterations, warmup):
    import torch
    torch.cuda.reset_peak_memory_stats()
    model = train_model().cuda().train()
    optimizer = torch.optim.Adam(model.parameters(), lr=TRAIN_LR)
    x, labels = (t.pin_memory() for t in train_batch(batch))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(
            model(x.cuda(non_blocking=True)), labels.cuda(non_blocking=True))
        loss.backward()
        optimizer.step()
    report_torch(timed(step, iterations, warmup))


def run_dfg_train(train_step, model, iterations, warmup):
    """(median ms, MiB of arena and weights region) of bench-train-step."""
    out = subprocess.run([train_step, "--device", "cuda", model, "adam",
                          str(iterations), str(warmup)], check=True,
                         capture_output=True, text=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    return (found["step_ms"],
            (found["arena_bytes"] + found["weights_bytes"]) / 2**20)


def build_model(name, dtype):
    import torch
    import export as exporter  # tests/models/export.py
    torch.manual_seed(1)
    model = exporter.make_model(name).eval()
    if name == "resnet50":
        from torch.fx.experimental.optimization import fuse
        model = fuse(model)  # as torch.onnx.export folds them
    return model.half() if dtype == "f16" else model


def example(name, batch, dtype):
    import export as exporter
    x = exporter.example_input(name, batch)
    return x.half() if dtype == "f16" else x


def export(name, batch, dtype, path):
    import torch
    import export as exporter
    model, x = build_model(name, dtype), example(name, batch, dtype)
    if dtype == "f16":  # f16 convolutions need the GPU to trace
        model, x = model.cuda(), x.cuda()
    torch.onnx.export(model, x, path, opset_version=13, input_names=["x"],
                      output_names=["y"], do_constant_folding=True,
                      **exporter.torchscript_exporter())


def torch_worker(name, batch, dtype, compiled, iterations, warmup):
    import torch
    torch.cuda.reset_peak_memory_stats()
    model = build_model(name, dtype).cuda()
    if compiled:
        model = torch.compile(model)
    x = example(name, batch, dtype).pin_memory()

    def step():
        with torch.inference_mode():
            model(x.cuda(non_blocking=True)).cpu()
    report_torch(timed(step, iterations, warmup))


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


def run_dfg(dfgc, model, iterations, warmup, extra=()):
    """(median ms, MiB of arena and weights) from `dfgc bench` (extra:
    more of its options)."""
    out = subprocess.run([dfgc, "bench", model, "--device", "cuda",
                          "--iterations", str(iterations), "--warmup",
                          str(warmup), *extra], check=True,
                         capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split()
        if (len(fields) == 3 and fields[0] in ("median", "arena", "weights")
                and fields[2] in ("ms", "bytes")):
            found[fields[0]] = float(fields[1])
    if set(found) != {"median", "arena", "weights"}:
        raise RuntimeError("no median, arena or weights in dfgc bench "
                           "output:\n" + out)
    return found["median"], (found["arena"] + found["weights"]) / 2**20


def measure_torch(case, compiled, args):
    """PyTorch's figures, or None (printed why) when torch.compile fails
    or is not measured (the training step)."""
    model, batch, dtype = CASES[case]
    if model == "resnet18_train":
        return None if compiled else json.loads(worker(
            "--torch-train-worker", str(batch), "--iterations",
            str(args.iterations), "--warmup", str(args.warmup)))
    try:
        return json.loads(worker(
            "--torch-worker", model, str(batch), dtype, str(int(compiled)),
            "--iterations", str(args.iterations), "--warmup",
            str(args.warmup)))
    except subprocess.CalledProcessError as e:
        if not compiled:
            raise
        print(f"<!-- {case}: torch.compile failed: "
              f"{(e.stderr or '').strip().splitlines()[-1:]} -->")
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dfgc", default=os.path.join(
        HERE, "..", "build", "tools", "dfgc"))
    parser.add_argument("--train-step", default=os.path.join(
        HERE, "..", "build", "bench", "bench-train-step"))
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--work-dir", help="where the ONNX exports are kept")
    parser.add_argument("--no-compile", action="store_true",
                        help="leave out the torch.compile column")
    parser.add_argument("--torch-worker", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--export", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--torch-train-worker", help=argparse.SUPPRESS)
    parser.add_argument("--export-train", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--check-torch", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.check_torch:
        return check_torch()
    if args.export:
        name, batch, dtype, path = args.export
        return export(name, int(batch), dtype, path)
    if args.export_train:
        return export_train(int(args.export_train[0]), args.export_train[1])
    if args.torch_train_worker:
        return torch_train_worker(int(args.torch_train_worker),
                                  args.iterations, args.warmup)
    if args.torch_worker:
        name, batch, dtype, compiled = args.torch_worker
        return torch_worker(name, int(batch), dtype, compiled == "1",
                            args.iterations, args.warmup)
    cases = args.cases.split(",")
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error(f"unknown cases {unknown}: {', '.join(CASES)}")
    try:
        worker("--check-torch")
    except subprocess.CalledProcessError as e:
        print(f"skipped: {(e.stdout or e.stderr).strip() or 'no torch'}")
        return 77
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="dfg-gpu-bench-")
    print("| case | dfg ms | dfg tf32 ms | dfg f16 ms (MiB) | eager ms | "
          "compiled ms | dfg / eager | dfg / compiled | dfg MiB | "
          "eager MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: |")
    eager = None
    for case in cases:
        model, batch, dtype = CASES[case]
        path = os.path.join(work_dir, f"{case}.onnx")
        training = model == "resnet18_train"
        if not os.path.exists(path):
            worker(*(["--export-train", str(batch), path] if training else
                     ["--export", model, str(batch), dtype, path]))
        dfg_ms, dfg_mib = (run_dfg_train if training else run_dfg)(
            args.train_step if training else args.dfgc, path,
            args.iterations, args.warmup)
        tf32_ms = f16_ms = "n/a"
        if not training and dtype == "f32":
            ms, _ = run_dfg(args.dfgc, path, args.iterations, args.warmup,
                            ("--precision", "tf32"))
            tf32_ms = f"{ms:.3f}"
            ms, mib = run_dfg(args.dfgc, path, args.iterations, args.warmup,
                              ("--precision", "f16"))
            f16_ms = f"{ms:.3f} ({mib:.0f})"
        eager = measure_torch(case, False, args)
        compiled = None if args.no_compile else measure_torch(case, True, args)
        c_ms = f"{compiled['median_ms']:.3f}" if compiled else "n/a"
        c_ratio = (f"{dfg_ms / compiled['median_ms']:.2f}" if compiled
                   else "n/a")
        print(f"| {case} | {dfg_ms:.3f} | {tf32_ms} | {f16_ms} | "
              f"{eager['median_ms']:.3f} | {c_ms} "
              f"| {dfg_ms / eager['median_ms']:.2f} | {c_ratio} | "
              f"{dfg_mib:.0f} | {eager['mib']:.0f} |", flush=True)
    print(f"\ndevice: {eager['device']}; PyTorch TF32: {eager['tf32']}; dfg "
          f"f32 strict (tf32 column: --precision tf32; f16 column: "
          f"--precision f16); "
          f"{args.iterations} timed runs after {args.warmup}, "
          "median; dfg MiB: arena and weights as planned (training: the "
          "weights region holds Adam's moments), eager MiB: "
          "max_memory_reserved; r18_train: one Adam step, eager only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
