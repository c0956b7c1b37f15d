#!/usr/bin/python3
"""Exports a BERT-base-shaped encoder classifier to ONNX for the training
benchmarks (docs/training.md, memory budgets).

usage: bench/export_bert_encoder.py OUT.onnx [--layers L] [--batch B]
                                    [--seq T] [--classes N]

Post-LN blocks as BERT-base's: d_model 768, 12 heads of 64, a GELU (erf)
MLP of 3072; the input "x" [B, T, 768] is the embeddings' output, the
head the mean over tokens and a linear layer to "logits" [B, N]. Random
weights from a fixed seed. Needs Debian's python3-torch (exits 77
without it).
"""
import argparse
import sys

try:
    import torch
except ImportError as error:
    print(f"torch not importable ({error})", file=sys.stderr)
    sys.exit(77)

D_MODEL, HEADS, HIDDEN = 768, 12, 3072


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = torch.nn.Linear(D_MODEL, D_MODEL)
        self.ln1 = torch.nn.LayerNorm(D_MODEL)
        self.fc1 = torch.nn.Linear(D_MODEL, HIDDEN)
        self.fc2 = torch.nn.Linear(HIDDEN, D_MODEL)
        self.ln2 = torch.nn.LayerNorm(D_MODEL)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(D_MODEL, dim=-1)
        heads = [b, t, HEADS, d // HEADS]
        q = q.reshape(heads).transpose(1, 2)
        k = k.reshape(heads).permute(0, 2, 3, 1)
        v = v.reshape(heads).transpose(1, 2)
        scores = torch.matmul(q, k) / (d // HEADS) ** 0.5
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        context = context.transpose(1, 2).reshape(b, t, d)
        h = self.ln1(x + self.proj(context))
        mlp = self.fc2(torch.nn.functional.gelu(self.fc1(h)))
        return self.ln2(h + mlp)


class Encoder(torch.nn.Module):
    def __init__(self, layers, classes):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(layers))
        self.head = torch.nn.Linear(D_MODEL, classes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--classes", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Encoder(args.layers, args.classes).eval()
    x = torch.randn(args.batch, args.seq, D_MODEL)
    torch.onnx.export(model, x, args.out, input_names=["x"],
                      output_names=["logits"], opset_version=14,
                      do_constant_folding=True)


if __name__ == "__main__":
    main()
