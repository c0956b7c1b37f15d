#!/bin/sh
# usage: weights_once.sh DFGC EXPORT_PY CACHE_DIR MODEL
#
# Weights once (passes/share_weights.c, issue 35): exports MODEL with
# PyTorch (cached in CACHE_DIR; a model whose exporter writes a tied
# weight twice, transposed, or reads it through Identity nodes), plans it,
# and fails unless the program's weights_bytes is within 1% of the sum of
# the model's distinct initializers: each counted once, whether another
# equals it byte for byte or transposed. model_test.sh checks the outputs
# against PyTorch's. Exits 77 only when python3-torch, torchvision or
# onnx cannot be imported.
set -eu
. "$(dirname "$0")/cached_export.sh"
"$dfgc" plan "$onnx" --json "$out/plan.json" > /dev/null
"$python" - "$onnx" "$out/plan.json" <<'PY'
import json, sys
import numpy as np
import onnx
from onnx import numpy_helper
arrays = [numpy_helper.to_array(t)
          for t in onnx.load(sys.argv[1]).graph.initializer]
kept = []
for a in arrays:
    if not any(k.dtype == a.dtype and (
            (k.shape == a.shape and np.array_equal(k, a)) or
            (a.ndim == 2 and k.shape == a.T.shape and np.array_equal(k, a.T)))
               for k in kept):
        kept.append(a)
total = sum(a.nbytes for a in arrays)
distinct = sum(a.nbytes for a in kept)
weights = json.load(open(sys.argv[2]))["weights_bytes"]
print(f"initializers {total} B, distinct {distinct} B "
      f"({len(kept)} of {len(arrays)}), program weights {weights} B "
      f"({weights / distinct:.4f}x)")
if distinct == total:
    sys.exit("the model holds no weight twice: nothing is checked")
sys.exit(0 if weights <= 1.01 * distinct else 1)
PY
