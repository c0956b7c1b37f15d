#!/bin/sh
# usage: model_test.sh DFGC EXPORT_PY CACHE_DIR MODEL
#
# Exports a torchvision MODEL with PyTorch (cached in CACHE_DIR), plans it
# (with the SVG, HTML, trace and caching-allocator pictures of the plan;
# the arena must be within 1.02x its lower bound, 1.05x when its first
# layers run band by band, and then below the op-by-op bound)
# and runs it with dfgc on the CPU (as ONNX and as a saved .dfgp: the same
# bits both ways), and compares dfg's output with
# PyTorch's: the relative error ||dfg - torch|| / ||torch|| must stay below
# 1e-4; for a quantized model (output from DequantizeLinear), the same
# top-1 on every input and every value within one quantization step. Exits 77 only when python3-torch, torchvision or onnx cannot be imported.
set -eu
. "$(dirname "$0")/cached_export.sh"
"$dfgc" plan "$onnx" --json "$out/plan.json" --svg "$out/plan.svg" \
    --html "$out/plan.html" --trace "$out/trace.json" --compare > "$out/plan.txt"
# The pictures of a real model's plan: the SVG is XML with one rectangle
# per arena tensor, the trace is Chrome trace-event JSON, and the caching
# allocator's reserved >= allocated >= the lower bound.
"$python" - "$out/plan.json" "$out/plan.svg" "$out/trace.json" <<'PY'
import json, sys, xml.dom.minidom
plan = json.load(open(sys.argv[1]))
# Bands of rows (tiled execution) interleave many small lifetimes, which
# the planners place a few percent above the bound.
slack = 1.02 if plan["tiling"] is None else 1.05
if plan["tiling"] is not None and \
        plan["arena_bytes"] >= plan["op_by_op_lower_bound_bytes"]:
    sys.exit("tiled, but the arena is not below the op-by-op bound")
svg = xml.dom.minidom.parse(sys.argv[2])
rects = [r for r in svg.getElementsByTagName("rect")
         if r.getAttribute("class").startswith("tensor ")]
arena = sum(t["region"] == "arena" for t in plan["tensors"])
if len(rects) != arena:
    sys.exit(f"SVG has {len(rects)} tensor rectangles, the plan {arena}")
# The plan: within the slack of its lower bound, and the chosen order's
# bound no higher than the recorded order's.
if plan["arena_bytes"] > slack * plan["lower_bound_bytes"]:
    sys.exit(f"arena {plan['arena_bytes']} above {slack} x the lower bound "
             f"{plan['lower_bound_bytes']}")
if plan["lower_bound_bytes"] > plan["recorded_order_lower_bound_bytes"]:
    sys.exit("the scheduled lower bound is above the recorded order's")
phases = {e["ph"] for e in json.load(open(sys.argv[3]))["traceEvents"]}
if not {"C", "X"} <= phases:
    sys.exit(f"trace lacks counter or complete events: {phases}")
PY
grep -q '^<!DOCTYPE html>' "$out/plan.html"
grep -q '^reserved >= allocated >= lower bound: yes$' "$out/plan.txt"
# Run twice: compiled in the process and as a .dfgp, mapped. A program
# is a program however it was made: the same kernels run, so the two
# outputs are the same bits.
"$dfgc" compile "$onnx" -o "$out/model.dfgp" > /dev/null
for program in "$onnx" "$out/model.dfgp"; do
[ ! -f "$out/output.bin" ] || mv "$out/output.bin" "$out/compiled.bin"
"$dfgc" run "$program" --input "input=$cache/$model.input.bin" \
    --output "output=$out/output.bin"
"$python" - "$cache/$model.output.bin" "$out/output.bin" "$onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import numpy_helper
want = np.fromfile(sys.argv[1], dtype=np.float32).astype(np.float64)
got = np.fromfile(sys.argv[2], dtype=np.float32).astype(np.float64)
if got.shape != want.shape:
    sys.exit(f"output has {got.size} values, PyTorch's {want.size}")
print(f"max abs diff vs PyTorch: {np.abs(got - want).max():.3g}")
# A quantized model's output comes out of a DequantizeLinear: rounding
# ties may go either way, so the check is the same top-1 per row and
# every value within one quantization step (that node's scale).
graph = onnx.load(sys.argv[3]).graph
last = next(n for n in graph.node if n.output[0] == graph.output[0].name)
if last.op_type != "DequantizeLinear":
    error = np.linalg.norm(got - want) / np.linalg.norm(want)
    print(f"relative error vs PyTorch: {error:.3g}")
    sys.exit(0 if error < 1e-4 else 1)
consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
consts.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t)
               for n in graph.node if n.op_type == "Constant"})
step = float(consts[last.input[1]])
dims = [d.dim_value for d in graph.output[0].type.tensor_type.shape.dim]
rows = want.reshape(dims[0], -1), got.reshape(dims[0], -1)
same_top1 = (rows[0].argmax(axis=1) == rows[1].argmax(axis=1)).all()
steps = np.abs(got - want).max() / step
print(f"top-1 of {dims[0]} inputs the same: {same_top1}; largest "
      f"difference {steps:.3g} quantization steps "
      f"({np.count_nonzero(got != want)} of {got.size} values differ)")
sys.exit(0 if same_top1 and steps <= 1 + 1e-3 else 1)
PY
done
cmp -s "$out/compiled.bin" "$out/output.bin" ||
    { echo "$model: compiled in the process and saved, the outputs differ"; exit 1; }
