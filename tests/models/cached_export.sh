# Sourced by the model scripts (model_test.sh, weights_once.sh) with
# python, export_py, cache and model set: exits 77 unless python imports
# torch, torchvision and onnx, then exports MODEL (cached in CACHE_DIR,
# again when EXPORT_PY is newer) and sets onnx to its path.
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
