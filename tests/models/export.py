#!/usr/bin/python3
"""Exports torchvision models to ONNX with a fixed input and PyTorch's output.

usage: export.py OUT_DIR MODEL [MODEL...]   (resnet18, mobilenet_v2, vit_b_16)
       export.py OUT_DIR MODEL --batch N

For each model writes OUT_DIR/MODEL.onnx (random weights, fixed seed, opset
13), OUT_DIR/MODEL.input.bin (float32 [N,3,224,224], seeded) and
OUT_DIR/MODEL.output.bin (PyTorch's float32 logits). Exits 77 with a message
if torch or torchvision cannot be imported.
"""
import os
import sys

try:
    import torch
    import torchvision
except ImportError as error:
    print(f"python3-torch / python3-torchvision not importable ({error}); "
          "skipping", file=sys.stderr)
    sys.exit(77)

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "vit_b_16": torchvision.models.vit_b_16,
}
SEED = 20240601


def randomize_batch_norms(model):
    """torchvision initialises BatchNorm to the identity (mean 0, var 1,
    scale 1, shift 0), which would leave the normalisation untested and
    lets MobileNetV2's activations fade to ~1e-8: give it random statistics
    and affine parameters instead."""
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            c = module.num_features
            module.running_mean.copy_(torch.randn(c) * 0.1)
            module.running_var.copy_(torch.rand(c) + 0.5)
            module.weight.data.copy_(torch.rand(c) + 0.5)
            module.bias.data.copy_(torch.randn(c) * 0.1)


def randomize_zero_linears(model):
    """torchvision's ViT starts its classification head at zero, which would
    make every logit 0 whatever dfg computes: give such layers random
    weights."""
    for module in model.modules():
        if isinstance(module, torch.nn.Linear) and not module.weight.any():
            torch.nn.init.normal_(module.weight, std=0.02)
            if module.bias is not None:
                torch.nn.init.normal_(module.bias, std=0.02)


def export(out_dir, name, batch):
    torch.manual_seed(SEED)
    model = MODELS[name](weights=None).eval()
    with torch.no_grad():
        randomize_batch_norms(model)
        randomize_zero_linears(model)
    x = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(SEED + 1))
    with torch.no_grad():
        y = model(x)
    stem = os.path.join(out_dir, name if batch == 1 else f"{name}_b{batch}")
    torch.onnx.export(model, x, stem + ".onnx", opset_version=13,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    x.numpy().astype("float32").tofile(stem + ".input.bin")
    y.numpy().astype("float32").tofile(stem + ".output.bin")
    print(f"{stem}.onnx: input {list(x.shape)}, output {list(y.shape)}")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, names, batch = argv[1], [], 1
    i = 2
    while i < len(argv):
        if argv[i] == "--batch":
            batch = int(argv[i + 1])
            i += 2
            continue
        if argv[i] not in MODELS:
            print(f"unknown model {argv[i]} (known: {', '.join(MODELS)})",
                  file=sys.stderr)
            return 2
        names.append(argv[i])
        i += 1
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in names:
        export(out_dir, name, batch)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
