# Sourced by the model scripts (model_test.sh, weights_once.sh), whose
# arguments are DFGC EXPORT_PY CACHE_DIR MODEL: sets dfgc, export_py,
# cache, model and python; exits 77 unless python imports torch,
# torchvision and onnx; exports MODEL (cached in CACHE_DIR, again when
# EXPORT_PY is newer) and sets onnx to its path; makes out, a scratch
# folder removed at exit.
dfgc=$1 export_py=$2 cache=$3 model=$4
python=/usr/bin/python3
if ! "$python" -c 'import torch, torchvision, onnx' 2>/dev/null; then
    echo "SKIP: $python cannot import torch, torchvision and onnx" \
         "(apt-get install python3-torch python3-torchvision python3-onnx)"
    exit 77
fi
mkdir -p "$cache"
onnx=$cache/$model.onnx
if [ ! -s "$onnx" ] || [ "$export_py" -nt "$onnx" ]; then
    "$python" "$export_py" "$cache" "$model"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
