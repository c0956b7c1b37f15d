#!/usr/bin/python3
"""Writes what the training test (tests/cli/dfgc_train_resnet.sh) trains on.

usage: train_export.py OUT_DIR [--size S] [--width C] [--classes K]
                               [--batch N] [--train R] [--val V]
       train_export.py OUT_DIR --resnet18 ...

OUT_DIR/train_mode.onnx and OUT_DIR/eval_mode.onnx: one small resnet-like
classifier (a stem, a basic residual block, a strided block with a 1x1
projection, global average pooling, a linear head; or torchvision's
resnet18 with --resnet18) exported by PyTorch in training mode
(TrainingMode.TRAINING, opset 15, no constant folding: the export PyTorch
documents for training, batch norms with their running-statistics
outputs) and in eval mode (the conventions of export.py: opset 13,
constant folding, batch norms folded into the convolutions), input
float32 [N, 3, S, S], output the logits [N, K].

OUT_DIR/train.npz and OUT_DIR/val.npz: a learnable data set, x float32
[R, 3, S, S] and y int64 [R]: K random class templates (a random 4x4
pattern per channel, upsampled to S x S), each example its class's
template plus Gaussian noise of standard deviation 1 (the template's
own). Exits 77 if torch cannot be imported.
"""
import argparse
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as error:
    print(f"python3-torch / numpy not importable ({error}); skipping",
          file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export import torchscript_exporter  # noqa: E402

SEED = 20240601


class Block(torch.nn.Module):
    def __init__(self, inp, out, stride):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(out)
        self.conv2 = torch.nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(out)
        self.down = None
        if stride != 1 or inp != out:
            self.down = torch.nn.Sequential(
                torch.nn.Conv2d(inp, out, 1, stride, bias=False),
                torch.nn.BatchNorm2d(out))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


def small_resnet(width, classes):
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, width, 3, 1, 1, bias=False),
        torch.nn.BatchNorm2d(width), torch.nn.ReLU(),
        Block(width, width, 1), Block(width, 2 * width, 2),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(2 * width, classes))


def export(model, x, path, training):
    kwargs = dict(input_names=["x"], output_names=["logits"],
                  **torchscript_exporter())
    if training:
        model.train()
        torch.onnx.export(model, x, path, opset_version=15,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, **kwargs)
    else:
        model.eval()
        torch.onnx.export(model, x, path, opset_version=13,
                          do_constant_folding=True, **kwargs)


def data_set(path, templates, rows, rng):
    y = rng.randint(0, len(templates), size=rows).astype(np.int64)
    x = templates[y] + rng.randn(rows, *templates.shape[1:])
    np.savez(path, x=x.astype(np.float32), y=y)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--size", type=int, default=16)
    p.add_argument("--width", type=int, default=8)
    p.add_argument("--classes", type=int, default=4)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--train", type=int, default=320)
    p.add_argument("--val", type=int, default=64)
    p.add_argument("--resnet18", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(SEED)
    if a.resnet18:
        import torchvision
        model = torchvision.models.resnet18(weights=None,
                                            num_classes=a.classes)
    else:
        model = small_resnet(a.width, a.classes)
    x = torch.randn(a.batch, 3, a.size, a.size)
    export(model, x, os.path.join(a.out, "train_mode.onnx"), True)
    export(model, x, os.path.join(a.out, "eval_mode.onnx"), False)
    rng = np.random.RandomState(SEED)
    # Smooth templates (a 4x4 pattern per channel, upsampled) that a
    # network pooling over space can tell apart.
    coarse = rng.randn(a.classes, 3, 4, 4)
    templates = np.kron(coarse, np.ones((1, 1, a.size // 4, a.size // 4)))
    data_set(os.path.join(a.out, "train.npz"), templates, a.train, rng)
    data_set(os.path.join(a.out, "val.npz"), templates, a.val, rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
