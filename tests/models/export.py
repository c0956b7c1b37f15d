#!/usr/bin/python3
"""Exports torchvision models to ONNX with a fixed input and PyTorch's output.

usage: export.py OUT_DIR MODEL [MODEL...]
       export.py OUT_DIR MODEL --batch N

MODEL is a torchvision classification model (resnet18, resnet50,
mobilenet_v2, mobilenet_v3_small, efficientnet_b0, densenet121, googlenet,
squeezenet1_0, mnasnet1_0, convnext_tiny, vit_b_16, ...; inception_v3 takes
299x299), bert_encoder: a 4-layer BERT-base-like encoder (hidden 768, 12
heads, feed-forward 3072, GELU, post-norm) over [N,128,768] embeddings, or
one of the model families of the ONNX front end (model_families.py):
lstm_lm, dcgan, gpt2_decoder, r3d_18 (video, 3-D convolutions),
fcn_resnet50 (segmentation: dilated convolutions and Resize) and int8_cnn
(QDQ int8 quantized, eight test images).

For each model writes OUT_DIR/MODEL.onnx (random weights, fixed seed, opset
13; 14 for the families), OUT_DIR/MODEL.input.bin (the seeded input: float32
[N,3,224,224] for the classifiers, int64 tokens for the language models)
and OUT_DIR/MODEL.output.bin (PyTorch's float32 output). Exits 77 with a
message if torch or torchvision cannot be imported.
"""
import inspect
import os
import sys

try:
    import torch
    import torchvision
except ImportError as error:
    print(f"python3-torch / python3-torchvision not importable ({error}); "
          "skipping", file=sys.stderr)
    sys.exit(77)

SEED = 20240601

import model_families  # noqa: E402 (needs torch, imported above)


class EncoderLayer(torch.nn.Module):
    """One BERT-base layer written with plain ops (the export of
    torch.nn.TransformerEncoderLayer depends on its fast path)."""

    def __init__(self, hidden=768, heads=12, ff=3072):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.norm1 = torch.nn.LayerNorm(hidden)
        self.ff1 = torch.nn.Linear(hidden, ff)
        self.ff2 = torch.nn.Linear(ff, hidden)
        self.norm2 = torch.nn.LayerNorm(hidden)

    def forward(self, x):
        n, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(x).split(h, dim=-1)
        q, k, v = (t.reshape(n, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
        a = torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5, dim=-1) @ v
        x = self.norm1(x + self.out(a.transpose(1, 2).reshape(n, s, h)))
        return self.norm2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


def bert_encoder(weights=None):
    del weights
    return torch.nn.Sequential(*[EncoderLayer() for _ in range(4)])


def make_model(name):
    if name in model_families.FAMILIES:
        return model_families.make(name)
    if name == "bert_encoder":
        return bert_encoder()
    if name == "googlenet":
        return torchvision.models.googlenet(weights=None, aux_logits=False,
                                            init_weights=True)
    if name == "inception_v3":
        return torchvision.models.inception_v3(weights=None, aux_logits=False,
                                               init_weights=True)
    return getattr(torchvision.models, name)(weights=None)


def example_input(name, batch):
    if name in model_families.FAMILIES:
        return model_families.example_input(name, batch, SEED + 1)
    shape = {"bert_encoder": (batch, 128, 768),
             "inception_v3": (batch, 3, 299, 299)}.get(name, (batch, 3, 224, 224))
    return torch.randn(*shape, generator=torch.Generator().manual_seed(SEED + 1))


def known(name):
    if name in ("bert_encoder", "googlenet", "inception_v3") or \
            name in model_families.FAMILIES:
        return True
    return name in torchvision.models.list_models(module=torchvision.models)


def randomize_batch_norms(model):
    """torchvision initialises BatchNorm to the identity (mean 0, var 1,
    scale 1, shift 0), which would leave the normalisation untested and
    lets MobileNetV2's activations fade to ~1e-8: give it random statistics
    and affine parameters instead."""
    for module in model.modules():
        if isinstance(module, (torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)):
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


def torchscript_exporter():
    """torch.onnx.export's arguments for the TorchScript exporter, which
    PyTorch 2.9 and later replace by default with the dynamo one (other
    graphs, other opsets)."""
    parameters = inspect.signature(torch.onnx.export).parameters
    return {"dynamo": False} if "dynamo" in parameters else {}


def export(out_dir, name, batch):
    torch.manual_seed(SEED)
    model = make_model(name).eval()
    with torch.no_grad():
        randomize_batch_norms(model)
        randomize_zero_linears(model)
    x = example_input(name, batch)
    with torch.no_grad():
        y = model(x)
    stem = os.path.join(out_dir, name if batch == 1 else f"{name}_b{batch}")
    opset = 14 if name in model_families.FAMILIES else 13
    torch.onnx.export(model, x, stem + ".onnx", opset_version=opset,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True, **torchscript_exporter())
    x.numpy().tofile(stem + ".input.bin")  # float32, or int64 tokens
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
        if not known(argv[i]):
            print(f"unknown model {argv[i]} (a torchvision classification "
                  "model or bert_encoder)", file=sys.stderr)
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
