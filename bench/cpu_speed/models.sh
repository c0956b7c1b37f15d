# Sourced by run.sh and cpu_time.sh from the tree's root, with $build
# (the build folder) and $python (one with torch and torchvision) set:
# sets dfgc and dir (the models' folder, made if missing).
dfgc=$build/tools/dfgc
dir=$build/bench-models
mkdir -p "$dir"
#
# model_files MODEL BATCH: sets stem to the files' name in $dir (MODEL, or
# MODEL_bBATCH past batch 1), exports $dir/$stem.onnx with
# tests/models/export.py when it is missing and compiles $dir/$stem.dfgp
# when it is missing or older.
model_files() {
    stem=$1
    [ "$2" -eq 1 ] || stem=${1}_b$2
    [ -s "$dir/$stem.onnx" ] ||
        "$python" tests/models/export.py "$dir" "$1" --batch "$2" >/dev/null 2>&1
    [ "$dir/$stem.dfgp" -nt "$dir/$stem.onnx" ] ||
        "$dfgc" compile "$dir/$stem.onnx" -o "$dir/$stem.dfgp" >/dev/null
}
