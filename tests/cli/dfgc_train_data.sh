#!/bin/sh
# dfgc train MODEL --data train.npz --val val.npz (docs/training.md): a
# small classifier learns class templates plus noise to a validation
# accuracy of at least 0.9, two epochs straight and one plus one resumed
# leave the same checkpoint, numpy.savez_compressed's files train as
# numpy.savez's, and malformed .npz files (truncated, corrupted, wrong
# dtype, rows that differ, Fortran order, no y, a shape unlike the
# model's) end with status 1 and one clear line.
# usage: dfgc_train_data.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
dfgc_test_setup train-data "$1"
dfgc_test_python "the model and data"
"$python" - "$work" <<'PY' || fail "writing the model and the data"
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
work = sys.argv[1]
rng = np.random.default_rng(7)
f32 = np.float32
inits = [numpy_helper.from_array((rng.standard_normal((16, 32)) * 0.25).astype(f32), "W1"),
         numpy_helper.from_array(np.zeros(32, f32), "b1"),
         numpy_helper.from_array((rng.standard_normal((32, 4)) * 0.25).astype(f32), "W2"),
         numpy_helper.from_array(np.zeros(4, f32), "b2")]
nodes = [helper.make_node("Gemm", ["x", "W1", "b1"], ["h"]),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("Gemm", ["r", "W2", "b2"], ["y"])]
g = helper.make_graph(nodes, "m",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 4])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
          work + "/m.onnx")
templates = rng.standard_normal((4, 16)).astype(f32)
def data(n):
    y = rng.integers(0, 4, n).astype(np.int64)
    x = (templates[y] + 0.5 * rng.standard_normal((n, 16))).astype(f32)
    return x, y
x, y = data(203)
np.savez(work + "/train.npz", x=x, y=y)
vx, vy = data(61)
np.savez(work + "/val.npz", x=vx, y=vy)
np.savez(work + "/mse.npz", x=x, y=np.eye(4, dtype=f32)[y])
np.savez_compressed(work + "/compressed.npz", x=x, y=y)
np.savez(work + "/f64.npz", x=x.astype(np.float64), y=y)
np.savez(work + "/i32.npz", x=x, y=y.astype(np.int32))
np.savez(work + "/rows.npz", x=x, y=y[:-1])
np.savez(work + "/fortran.npz", x=np.asfortranarray(x), y=y)
np.savez(work + "/noy.npz", x=x)
xn = x.copy()
xn[5, 3] = np.nan
np.savez(work + "/nan.npz", x=xn, y=y)
np.savez(work + "/shape.npz", x=x[:, :15].copy(), y=y)
b = open(work + "/train.npz", "rb").read()
open(work + "/truncated.npz", "wb").write(b[:len(b) // 2])
open(work + "/garbage.npz", "wb").write(b"PK\x03\x04" + b"\xff" * 40)
for src, dst in (("train", "flipped"), ("compressed", "flipped_deflate")):
    b = bytearray(open(work + "/" + src + ".npz", "rb").read())
    b[400] ^= 0x10
    open(work + "/" + dst + ".npz", "wb").write(b)
PY
model="$work/m.onnx"

"$dfgc" train "$model" --data "$work/train.npz" --val "$work/val.npz" \
    --epochs 4 --checkpoint "$work/straight" --save "$work/trained.onnx" \
    >"$work/out" 2>"$work/err" ||
    fail "dfgc train --data: $(cat "$work/err")"
grep -q "^batches of 8: 25 an epoch (the last 3 of the 203 shuffled examples dropped)$" \
    "$work/out" || fail "batch summary: $(cat "$work/out")"
grep -q "^epoch 4: loss " "$work/out" || fail "no epoch 4: $(cat "$work/out")"
accuracy=$(sed -n 's/^val_loss=[0-9.]* val_accuracy=\([0-9.]*\)$/\1/p' "$work/out" | tail -1)
grep -q "^saved $work/trained.onnx: 4 trained initializers$" "$work/out" ||
    fail "--save: $(cat "$work/out")"
[ -n "$accuracy" ] || fail "no val_accuracy: $(cat "$work/out")"
awk "BEGIN { exit !($accuracy >= 0.9) }" ||
    fail "val_accuracy $accuracy < 0.9: $(cat "$work/out")"

# Two epochs + two resumed leave the straight run's checkpoint.
"$dfgc" train "$model" --data "$work/train.npz" --epochs 2 \
    --checkpoint "$work/resumed" >/dev/null 2>"$work/err" || fail "$(cat "$work/err")"
"$dfgc" train "$model" --data "$work/train.npz" --epochs 4 \
    --resume "$work/resumed" --checkpoint "$work/resumed" >"$work/out" 2>"$work/err" ||
    fail "--resume: $(cat "$work/err")"
grep -q "^epoch 3: " "$work/out" && ! grep -q "^epoch 2: " "$work/out" ||
    fail "--resume did not go on from epoch 3: $(cat "$work/out")"
cmp -s "$work/straight" "$work/resumed" ||
    fail "4 epochs and 2 + 2 resumed left different checkpoints"

# numpy.savez_compressed's deflated entries hold the same data.
"$dfgc" train "$model" --data "$work/train.npz" --epochs 1 >"$work/stored" &&
"$dfgc" train "$model" --data "$work/compressed.npz" --epochs 1 >"$work/out" ||
    fail "--data compressed.npz"
cmp -s "$work/stored" "$work/out" || fail "savez_compressed trains otherwise"

# --schedule cosine decays the learning rate: another first epoch.
"$dfgc" train "$model" --data "$work/train.npz" --epochs 2 --schedule cosine \
    >"$work/out" 2>"$work/err" || fail "--schedule cosine: $(cat "$work/err")"
grep -q "^epoch 2: " "$work/out" || fail "cosine: $(cat "$work/out")"
! cmp -s "$work/stored" "$work/out" || fail "--schedule cosine changed nothing"

# --schedule step and --warmup change the run; a warm-up of every step
# (one epoch) and a step decay that starts after it leave that epoch as
# the warm-up alone made it.
for schedule in "--schedule step --step-size 1 --gamma 0.5" "--warmup 3"; do
    # shellcheck disable=SC2086 # the options split on purpose
    "$dfgc" train "$model" --data "$work/train.npz" --epochs 1 $schedule \
        >"$work/out" 2>"$work/err" || fail "$schedule: $(cat "$work/err")"
    ! cmp -s "$work/stored" "$work/out" || fail "$schedule changed nothing"
done
epoch_steps=$(sed -n 's/^batches of [0-9]*: \([0-9]*\) an epoch.*/\1/p' "$work/out")
"$dfgc" train "$model" --data "$work/train.npz" --epochs 1 \
    --warmup "$epoch_steps" >"$work/warm" || fail "--warmup an epoch"
"$dfgc" train "$model" --data "$work/train.npz" --epochs 1 \
    --warmup "$epoch_steps" --schedule step --step-size 1 --gamma 0.5 \
    >"$work/out" || fail "--warmup and --schedule step"
cmp -s "$work/warm" "$work/out" || fail "the step decay began in the warm-up"

# mse: float32 targets like the prediction; no accuracy.
"$dfgc" train "$model" --data "$work/mse.npz" --val "$work/mse.npz" --loss mse \
    --epochs 1 --optimizer sgd --lr 0.01 --momentum 0.5 --weight-decay 1e-4 \
    --accumulate 2 >"$work/out" 2>"$work/err" ||
    fail "--loss mse: $(cat "$work/err")"
grep -q "^val_loss=[0-9.]*$" "$work/out" || fail "mse: $(cat "$work/out")"

# A NaN in x ends the run at its step with status 1 (the finite guard).
"$dfgc" train "$model" --data "$work/nan.npz" --epochs 1 >"$work/out" 2>"$work/err"
[ $? -eq 1 ] || fail "a NaN in x: not status 1"
grep -q "'loss' is NaN; the weights of step [0-9]* are kept" "$work/err" ||
    fail "a NaN in x: $(cat "$work/err")"

# Malformed data: status 1 and a message that says what is wrong.
bad() {
    expect_error 1 train "$model" --data "$work/$1.npz" --epochs 1
    grep -q "$2" "$work/err" || fail "$1.npz: $(cat "$work/err")"
}
bad f64 "float32"
bad i32 "int64"
bad rows "x has 203 rows, y 202"
bad fortran "Fortran order"
bad noy "no array 'y'"
bad shape "the training program's input 'x'"
bad truncated "not a complete .npz"
bad garbage "not a complete .npz"
bad flipped "CRC-32"
bad flipped_deflate "deflated data\|CRC-32"
expect_error 1 train "$model" --data "$work/missing.npz"
expect_error 1 train "$model" --data "$work/train.npz" --loss mse
expect_error 2 train "$model" --val "$work/val.npz"
expect_error 2 train "$model" --data "$work/train.npz" --schedule step
expect_error 2 train "$model" --data "$work/train.npz" --step-size 2
expect_error 2 train "$model" --data "$work/train.npz" --schedule step \
    --step-size 2 --gamma 0
expect_error 2 train "$model" --data "$work/train.npz" --schedule cosine \
    --gamma 0.5
expect_error 2 train "$model" --warmup 2
expect_error 1 train "$model" --data "$work/train.npz" --schedule cosine \
    --epochs 1 --warmup 1000
expect_error 2 train "$model" --schedule cosine
expect_error 2 train "$model" --data "$work/train.npz" --momentum 1
expect_error 2 train "$model" --data "$work/train.npz" --weight-decay -1
expect_error 2 train "$model" --data "$work/train.npz" --lr 0
expect_error 1 train "$model" --data "$work/train.npz" --batch 16
echo "ok"
