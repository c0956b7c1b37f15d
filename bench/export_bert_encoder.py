#!/usr/bin/python3
"""Exports a BERT-base-shaped encoder classifier to ONNX for the training
benchmarks (docs/training.md, memory budgets).

usage: bench/export_bert_encoder.py OUT.onnx [--layers L] [--batch B]
                                    [--seq T] [--classes N]

The layers are tests/models/export.py's bert_encoder layers (BERT-base's:
hidden 768, 12 heads, feed-forward 3072, GELU, post-norm); the input "x"
[B, T, 768] is the embeddings' output, the head the mean over tokens and
a linear layer to "logits" [B, N], so that `dfgc train` and `dfgc plan
--training` append a cross entropy. Random weights from a fixed seed.
Needs Debian's python3-torch (exits 77 without it).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "models"))
import export  # noqa: E402 (exits 77 without torch)
import torch  # noqa: E402


class Classifier(torch.nn.Module):
    def __init__(self, layers, classes):
        super().__init__()
        self.layers = torch.nn.Sequential(
            *[export.EncoderLayer() for _ in range(layers)])
        self.head = torch.nn.Linear(768, classes)

    def forward(self, x):
        return self.head(self.layers(x).mean(dim=1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--classes", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(export.SEED)
    model = Classifier(args.layers, args.classes).eval()
    x = torch.randn(args.batch, args.seq, 768)
    torch.onnx.export(model, x, args.out, input_names=["x"],
                      output_names=["logits"], opset_version=14)


if __name__ == "__main__":
    main()
