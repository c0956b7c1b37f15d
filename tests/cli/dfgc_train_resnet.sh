#!/bin/sh
# Issue 32's done-when run at a size that takes seconds: a small
# resnet-like classifier exported by PyTorch in training mode and in eval
# mode (tests/models/train_export.py) trains with 'dfgc train --data
# --val' on class templates plus noise to a validation accuracy of at
# least 0.9; the saved ONNX model gives, in dfg, the predictions the
# training's own evaluation counted (its accuracy on the validation set)
# and, where $DFG_ORT_PYTHON (else Debian's python3) imports onnxruntime,
# ONNX Runtime's outputs within 1e-4; two epochs straight and one plus
# one resumed leave the same checkpoint and saved model bytes.
# usage: dfgc_train_resnet.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
dfgc_test_setup train-resnet "$1"
dfgc_test_python "the model"
"$python" -c "import torch" 2>/dev/null || {
    echo "$python without torch: nothing to export"
    exit 77
}
"$python" "$(dirname "$0")/../models/train_export.py" "$work" \
    >"$work/export.log" 2>&1 || fail "train_export.py: $(cat "$work/export.log")"

# The last epoch's validation accuracy of dfgc train's output $1.
accuracy() {
    sed -n 's/^val_loss=[0-9.]* val_accuracy=\([0-9.]*\)$/\1/p' "$1" | tail -1
}

for mode in train_mode eval_mode; do
    "$dfgc" train "$work/$mode.onnx" --data "$work/train.npz" \
        --val "$work/val.npz" --epochs 3 --save "$work/$mode.trained.onnx" \
        >"$work/$mode.out" 2>"$work/err" ||
        fail "dfgc train $mode.onnx: $(cat "$work/err")"
    got=$(accuracy "$work/$mode.out")
    "$python" -c "import sys; sys.exit(float('$got') < 0.9)" ||
        fail "$mode: validation accuracy '$got' < 0.9: $(cat "$work/$mode.out")"

    # Saved in eval form: no batch norm in training mode, none with the
    # running statistics as outputs (ONNX Runtime would use the batch's).
    "$python" - "$work/$mode.trained.onnx" <<'PY' || fail "$mode: eval form"
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
for n in m.graph.node:
    mode = [a.i for a in n.attribute if a.name == "training_mode"]
    if n.op_type == "BatchNormalization" and (any(mode) or len(n.output) > 1):
        sys.exit(f"{n.name}: training_mode {mode}, outputs {list(n.output)}")
PY
    # The saved model in dfg, batch by batch over the validation set:
    # its accuracy is the one training reported (every batch whole).
    "$dfgc" compile "$work/$mode.trained.onnx" -o "$work/$mode.dfgp" \
        >/dev/null || fail "dfgc compile $mode.trained.onnx"
    "$python" - "$work" <<'PY' || fail "$mode: splitting the validation set"
import sys, numpy as np
v = np.load(sys.argv[1] + "/val.npz")
for b in range(len(v["y"]) // 16):
    v["x"][16 * b:16 * b + 16].astype("<f4").tofile(f"{sys.argv[1]}/x{b}.bin")
PY
    for x in "$work"/x*.bin; do
        "$dfgc" run "$work/$mode.dfgp" --input "x=$x" \
            --output "logits=${x%.bin}.logits" >/dev/null ||
            fail "dfgc run $mode.dfgp"
    done
    "$python" - "$work" "$got" <<'PY' || fail "$mode: dfg's saved model"
import sys, numpy as np
work, want = sys.argv[1], float(sys.argv[2])
y = np.load(work + "/val.npz")["y"]
p = np.concatenate([np.fromfile(f"{work}/x{b}.logits", "<f4").reshape(16, -1)
                    for b in range(len(y) // 16)]).argmax(1)
got = float((p == y).mean())
sys.exit(0 if abs(got - want) < 1e-3 else
         f"the saved model's accuracy {got}, training reported {want}")
PY
    ort=${DFG_ORT_PYTHON:-$python}
    if "$ort" -c "import onnxruntime" 2>/dev/null; then
        "$ort" - "$work" "$mode" <<'PY' || fail "$mode: ONNX Runtime"
import sys, numpy as np, onnxruntime as ort
work, mode = sys.argv[1:]
s = ort.InferenceSession(f"{work}/{mode}.trained.onnx",
                         providers=["CPUExecutionProvider"])
y = np.load(work + "/val.npz")["y"]
for b in range(len(y) // 16):
    x = np.fromfile(f"{work}/x{b}.bin", "<f4").reshape(16, 3, 16, 16)
    got = s.run(None, {"x": x})[0]
    want = np.fromfile(f"{work}/x{b}.logits", "<f4").reshape(got.shape)
    d = float(np.abs(got - want).max())
    if d > 1e-4 or (got.argmax(1) != want.argmax(1)).any():
        sys.exit(f"batch {b}: ONNX Runtime differs from dfg by {d}")
PY
    else
        echo "($ort has no onnxruntime: the ONNX Runtime check is skipped)"
    fi
done

# Resume: 2 epochs straight and 1 + 1 resumed, the same bytes.
m="$work/train_mode.onnx"
"$dfgc" train "$m" --data "$work/train.npz" --epochs 2 \
    --checkpoint "$work/straight" --save "$work/straight.onnx" >/dev/null ||
    fail "2 epochs"
"$dfgc" train "$m" --data "$work/train.npz" --epochs 1 \
    --checkpoint "$work/resumed" >/dev/null || fail "1 epoch"
"$dfgc" train "$m" --data "$work/train.npz" --epochs 2 --resume "$work/resumed" \
    --checkpoint "$work/resumed" --save "$work/resumed.onnx" >"$work/out" ||
    fail "1 epoch resumed"
grep -q "^epoch 1: " "$work/out" && fail "resumed: epoch 1 ran again"
cmp -s "$work/straight" "$work/resumed" ||
    fail "2 epochs and 1 + 1 resumed left different checkpoints"
cmp -s "$work/straight.onnx" "$work/resumed.onnx" ||
    fail "2 epochs and 1 + 1 resumed saved different models"
echo "ok"
