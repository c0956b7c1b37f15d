#!/usr/bin/python3
"""Exports torchvision's resnet18 to ONNX for the training benchmarks.

usage: bench/export_resnet18.py OUT.onnx --size S --classes N [--batch B]

Random weights from a fixed seed; batch norms kept as BatchNormalization
nodes (exported in eval mode, TrainingMode.PRESERVE; dfg trains them with
batch statistics either way). The input is "x" [B, 3, S, S], the output
"logits" [B, N]. Needs Debian's python3-torch (exits 77 without it).

PyTorch's exporter merges initializers of equal value (every fresh batch
norm's scale, bias and running statistics) into one, read through Identity
nodes: trained as exported, all those layers would share one weight. Each
Identity of an initializer becomes an initializer of its own again.
"""
import argparse
import sys

try:
    import torch
    import torchvision
except ImportError as error:
    print(f"torch/torchvision not importable ({error})", file=sys.stderr)
    sys.exit(77)


def unshare_initializers(path):
    """Gives every Identity of an initializer its own copy of the data."""
    import onnx
    model = onnx.load(path)
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    kept = []
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in initializers:
            copy = onnx.TensorProto()
            copy.CopyFrom(initializers[node.input[0]])
            copy.name = node.output[0]
            graph.initializer.append(copy)
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    torch.manual_seed(20240601)
    model = torchvision.models.resnet18(num_classes=args.classes).eval()
    x = torch.randn(args.batch, 3, args.size, args.size)
    torch.onnx.export(model, x, args.out, opset_version=13,
                      input_names=["x"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)
    unshare_initializers(args.out)


if __name__ == "__main__":
    main()
