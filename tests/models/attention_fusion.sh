#!/bin/sh
# usage: attention_fusion.sh DFGC EXPORT_PY CACHE_DIR
#
# The attention fusion on an exported BERT-like encoder (export.py's
# bert_encoder, 4 layers, cached in CACHE_DIR): compiled for the CUDA
# target, each layer's MatMul, Div, Softmax, MatMul is one attention step;
# that program (its attention on the CPU kernel) and the CPU's own
# (unfused) program both match PyTorch's output within 1e-4 and each
# other within 1e-5. Exits 77 without torch or the CUDA module (the
# target that takes the fused op; tests/fusion/test_fuse_attention.c
# covers the pass without it).
set -eu

# Compiling for CUDA needs the module, not a device: "not installed" skips.
if "$1" devices 2>/dev/null | grep -q '^cuda  *not installed'; then
    echo "SKIP: this build has no cuda backend module"
    exit 77
fi
set -- "$1" "$2" "$3" bert_encoder
. "$(dirname "$0")/cached_export.sh"

"$dfgc" compile "$onnx" --device cuda -o "$out/cuda.dfgp" > /dev/null
"$dfgc" plan "$out/cuda.dfgp" --json "$out/plan.json" > /dev/null
"$dfgc" run "$out/cuda.dfgp" --device cpu \
    --input "input=$cache/$model.input.bin" --output "output=$out/fused.bin"
"$dfgc" run "$onnx" --input "input=$cache/$model.input.bin" \
    --output "output=$out/plain.bin"
"$python" - "$out/plan.json" "$cache/$model.output.bin" "$out/fused.bin" \
    "$out/plain.bin" <<'PY'
import json, sys
import numpy as np
ops = [s["op"] for s in json.load(open(sys.argv[1]))["steps"]]
if ops.count("attention") != 4 or "softmax" in ops:
    sys.exit(f"{ops.count('attention')} attention steps, softmax left: "
             f"{'softmax' in ops}")
torch, fused, plain = (np.fromfile(f, np.float32) for f in sys.argv[2:5])
def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))
print(f"fused vs torch {rel(fused, torch):.3g}, unfused vs torch "
      f"{rel(plain, torch):.3g}, fused vs unfused {rel(fused, plain):.3g}")
if rel(fused, torch) > 1e-4 or rel(plain, torch) > 1e-4 or \
        rel(fused, plain) > 1e-5:
    sys.exit("outputs differ")
PY
