#!/usr/bin/python3
"""A model's outputs on the GPU against the CPU's (and PyTorch's).

usage: gpu_compare.py DFGC MODEL [--input NAME=FILE]... [--reference FILE]
                      [--tolerance T] [--nhwc-vs-nchw PRECISION]

Runs `dfgc run MODEL` with --device cpu and --device cuda (the same seeded
inputs, or those given) and writes every output; each output's relative
error ||gpu - cpu|| / ||cpu|| must stay below T (1e-4: strict f32 on both
sides, only the order of sums differs). With --reference, the first
output is also held to T against that file of float32 values (PyTorch's
output). With --nhwc-vs-nchw f16|bf16, both runs are on the GPU at that
precision instead: channels-last convolutions (the default layouts)
against plain NCHW ones (--no-layouts). Prints one line per comparison;
exits 1 on the first too far.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
          "bf16": None, "i64": np.int64, "i32": np.int32, "i8": np.int8,
          "u8": np.uint8, "bool": np.bool_}


def run(dfgc, model, device, inputs, outputs, folder, flags=()):
    """Runs MODEL once (with flags); returns [(name, dtype, path)] of its
    outputs."""
    command = [dfgc, "run", model, "--device", device, *flags]
    tag = "".join([device, *flags])
    for spec in inputs:
        command += ["--input", spec]
    for name in outputs:
        command += ["--output",
                    f"{name}={os.path.join(folder, tag + '.' + name)}"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{model} on {device} {' '.join(flags)}: dfgc run failed:"
                 f"\n{done.stderr}")
    found = []
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[1].startswith("["):
            found.append((fields[0], fields[2],
                          os.path.join(folder, tag + "." + fields[0])))
    return found


def load(path, dtype):
    numpy_type = DTYPES.get(dtype)
    if dtype == "bf16":
        raw = np.fromfile(path, dtype=np.uint16).astype(np.uint32) << 16
        return raw.view(np.float32).astype(np.float64)
    if numpy_type is None:
        sys.exit(f"unknown dtype {dtype}")
    return np.fromfile(path, dtype=numpy_type).astype(np.float64)


def relative_error(got, want):
    if got.shape != want.shape:
        return float("inf")
    scale = np.linalg.norm(want)
    return np.linalg.norm(got - want) / (scale if scale > 0 else 1.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dfgc")
    parser.add_argument("model")
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--reference")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--nhwc-vs-nchw", metavar="PRECISION")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        names = [name for name, _, _ in
                 run(args.dfgc, args.model, "cpu", args.input, [], folder)]
        if args.nhwc_vs_nchw:
            half = ("--precision", args.nhwc_vs_nchw)
            cpu = run(args.dfgc, args.model, "cuda", args.input, names,
                      folder, (*half, "--no-layouts"))
            gpu = run(args.dfgc, args.model, "cuda", args.input, names,
                      folder, half)
            label = f"{args.nhwc_vs_nchw} nhwc vs nchw"
        else:
            cpu = run(args.dfgc, args.model, "cpu", args.input, names, folder)
            gpu = run(args.dfgc, args.model, "cuda", args.input, names,
                      folder)
            label = "gpu vs cpu"
        checks = []
        for (name, dtype, cpu_path), (_, _, gpu_path) in zip(cpu, gpu):
            checks.append((f"{name} {label}", load(gpu_path, dtype),
                           load(cpu_path, dtype)))
        if args.reference and gpu:
            checks.append((f"{gpu[0][0]} gpu vs reference",
                           load(gpu[0][2], gpu[0][1]),
                           np.fromfile(args.reference,
                                       dtype=np.float32).astype(np.float64)))
        failed = False
        for label, got, want in checks:
            error = relative_error(got, want)
            verdict = "ok" if error <= args.tolerance else "TOO FAR"
            print(f"{os.path.basename(args.model)}: {label}: relative error "
                  f"{error:.3g} ({verdict})")
            failed |= error > args.tolerance
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
