#!/bin/sh
# dfgc train --checkpoint, --resume and --save (docs/training.md): four
# synthetic steps straight and two plus two resumed leave the same
# checkpoint bytes, as do two digits epochs and one plus one, a
# corrupted checkpoint is refused with status 1, and the saved ONNX model
# gives dfg's outputs of the trained weights, in dfg and, where
# $DFG_ORT_PYTHON (else Debian's python3) imports onnxruntime, in ONNX
# Runtime too.
# usage: dfgc_train_keep.sh PATH/TO/dfgc
set -u
. "$(dirname "$0")/dfgc_test_lib.sh"
dfgc_test_setup train-keep "$1"
dfgc_test_python "the model"
model="$work/m.onnx"
"$python" - "$model" <<'PY' || fail "writing the model"
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
r = np.random.RandomState(0)
def init(name, shape, add=0.0):
    return numpy_helper.from_array((r.rand(*shape) - 0.5 + add).astype(np.float32), name)
inits = [init("W", (3, 2, 3, 3)), init("B", (3,)), init("scale", (3,), 1.5),
         init("shift", (3,)), init("mean", (3,)), init("var", (3,), 2.0),
         init("W2", (5, 48)), init("b2", (5,))]
nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["n"]),
         helper.make_node("Relu", ["n"], ["r"]),
         helper.make_node("Flatten", ["r"], ["f"]),
         helper.make_node("Gemm", ["f", "W2", "b2"], ["y"], transB=1)]
g = helper.make_graph(nodes, "m",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2, 4, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 5])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, sys.argv[1])
PY

train() {
    "$dfgc" train "$model" "$@" >"$work/out" 2>"$work/err" ||
        fail "dfgc train $*: $(cat "$work/err")"
}
train --steps 4 --checkpoint "$work/straight" --save "$work/trained.onnx"
grep -q "^saved $work/trained.onnx: 8 trained initializers$" "$work/out" ||
    fail "--save summary: $(cat "$work/out")"
train --steps 2 --checkpoint "$work/resumed"
train --steps 4 --resume "$work/resumed" --checkpoint "$work/resumed"
grep -q "^step 3: " "$work/out" && ! grep -q "^step 2: " "$work/out" ||
    fail "--resume did not go on from step 3: $(cat "$work/out")"
cmp -s "$work/straight" "$work/resumed" ||
    fail "4 steps and 2 + 2 resumed left different checkpoints"

# A flipped byte, another seed, or not a checkpoint: status 1, one line.
"$python" -c "
import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[len(b) // 2] ^= 1
open(sys.argv[2], 'wb').write(b)" "$work/straight" "$work/bad"
expect_error 1 train "$model" --steps 5 --resume "$work/bad"
grep -q "corrupted" "$work/err" || fail "corrupted: $(cat "$work/err")"
expect_error 1 train "$model" --steps 5 --seed 2 --resume "$work/straight"
expect_error 1 train "$model" --steps 5 --resume "$model"
expect_error 2 train example:mlp --save "$work/x.onnx"
expect_error 2 train example:mlp --epochs 2 --stop-after 1
expect_error 2 train "$model" --stop-after 1 --checkpoint "$work/x"

# The digits: 2 epochs straight, and 1 (--stop-after, as if interrupted)
# + 1 resumed, leave the same checkpoint bytes and the same accuracy.
"$dfgc" train example:mlp --epochs 2 --checkpoint "$work/d2" \
    >"$work/straight.txt" || fail "digits, 2 epochs"
"$dfgc" train example:mlp --epochs 2 --stop-after 1 --checkpoint "$work/d11" \
    >/dev/null || fail "digits, --stop-after 1"
"$dfgc" train example:mlp --epochs 2 --resume "$work/d11" \
    --checkpoint "$work/d11" >"$work/resumed.txt" || fail "digits, resumed"
grep -q "^epoch 1: " "$work/resumed.txt" && fail "digits: epoch 1 ran again"
cmp -s "$work/d2" "$work/d11" ||
    fail "digits: 2 epochs and 1 + 1 resumed left different checkpoints"
[ "$(grep test_accuracy "$work/straight.txt")" = \
  "$(grep test_accuracy "$work/resumed.txt")" ] || fail "digits: accuracy"

# The saved model in dfg: its outputs are the trained program's eval.
"$dfgc" compile "$work/trained.onnx" -o "$work/trained.dfgp" >/dev/null ||
    fail "dfgc compile trained.onnx"
"$python" -c "
import numpy as np; np.random.RandomState(1).rand(4, 2, 4, 4).astype('<f4').tofile('$work/x.bin')"
"$dfgc" run "$work/trained.dfgp" --input "x=$work/x.bin" \
    --output "y=$work/y.bin" >/dev/null || fail "dfgc run trained.dfgp"
"$dfgc" compile "$model" -o "$work/m.dfgp" >/dev/null || fail "compile m.onnx"
"$dfgc" run "$work/m.dfgp" --input "x=$work/x.bin" \
    --output "y=$work/y0.bin" >/dev/null || fail "dfgc run m.dfgp"
cmp -s "$work/y.bin" "$work/y0.bin" && fail "the saved model is untrained"

ort=${DFG_ORT_PYTHON:-$python}
if "$ort" -c "import onnxruntime" 2>/dev/null; then
    "$ort" -c "
import sys, numpy as np, onnxruntime as ort
x = np.fromfile('$work/x.bin', '<f4').reshape(4, 2, 4, 4)
got = ort.InferenceSession('$work/trained.onnx').run(None, {'x': x})[0]
want = np.fromfile('$work/y.bin', '<f4').reshape(4, 5)
d = float(np.abs(got - want).max())
sys.exit(0 if d <= 1e-4 else 'ONNX Runtime differs from dfg by %g' % d)" ||
        fail "ONNX Runtime on the saved model"
else
    echo "($ort has no onnxruntime: the ONNX Runtime check is skipped)"
fi
exit 0
