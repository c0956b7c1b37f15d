#!/usr/bin/python3
"""Models nobody tuned dfg on, tried the way a new user tries them.

usage: held_out.py DFGC OUT_DIR [--repeats N] [--iterations N] [MODEL...]

Exports each model with torch.onnx.export (random weights, fixed seed; the
opset and exporter options of its row: older opsets, constant folding off,
training-mode export), runs it once with `DFGC run MODEL.onnx --input` on
the exported input and compares the output with PyTorch's (max absolute
difference over max |reference|), then times the `.onnx` door (`DFGC bench
MODEL.onnx`: import, compile and run in one process) beside ONNX Runtime
and OpenVINO (peer_bench.py, from $PEER_PYTHON, default
/work/venv/bin/python), each in fresh processes, REPEATS interleaved
rounds (default 3) of ITERATIONS runs (default 15), OMP_NUM_THREADS
threads (default 2). Prints a Markdown table: the medians, dfg over each
peer, the relative error, and what failed where. Exits 77 when torch or
torchvision is missing.

The models: torchvision ones outside the speed tables (segmentation,
video, detection, older opsets) and small networks written here in the
shapes other fields use (a GroupNorm U-Net, ESPCN super-resolution, a
style-transfer net with reflection padding and instance norm, a YOLO-like
detector with SPPF, a conv + GRU speech model, a pre-norm transformer
encoder, MLP-Mixer); and held_out_fields.py's, the fourth set: 1-D
signals, point clouds, graphs, a GAN generator, an encoder-decoder
transformer, full 3-D convolutions.
"""
import os
import statistics
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision
except ImportError as error:
    print(f"torch, torchvision, onnx and numpy are needed ({error})",
          file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 1


class GroupNormBlock(nn.Module):
    def __init__(self, cin, cout, groups=8):
        super().__init__()
        self.n1 = nn.GroupNorm(groups, cin)
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.n2 = nn.GroupNorm(groups, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.c1(F.silu(self.n1(x)))
        return self.c2(F.silu(self.n2(h))) + self.skip(x)


class UNet(nn.Module):
    """A diffusion-style U-Net: GroupNorm, SiLU, transposed convs, skips."""

    def __init__(self):
        super().__init__()
        self.inc = nn.Conv2d(3, 64, 3, padding=1)
        self.d1 = GroupNormBlock(64, 64)
        self.down1 = nn.Conv2d(64, 64, 3, 2, 1)
        self.d2 = GroupNormBlock(64, 128)
        self.down2 = nn.Conv2d(128, 128, 3, 2, 1)
        self.mid = GroupNormBlock(128, 128)
        self.up2 = nn.ConvTranspose2d(128, 128, 4, 2, 1)
        self.u2 = GroupNormBlock(256, 64)
        self.up1 = nn.ConvTranspose2d(64, 64, 4, 2, 1)
        self.u1 = GroupNormBlock(128, 64)
        self.out = nn.Conv2d(64, 3, 3, padding=1)

    def forward(self, x):
        x = self.inc(x)
        a = self.d1(x)
        b = self.d2(self.down1(a))
        m = self.mid(self.down2(b))
        u = self.u2(torch.cat([self.up2(m), b], 1))
        u = self.u1(torch.cat([self.up1(u), a], 1))
        return self.out(F.silu(u))


class ESPCN(nn.Module):
    """Super-resolution: convs with tanh, then PixelShuffle."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 64, 5, padding=2)
        self.c2 = nn.Conv2d(64, 32, 3, padding=1)
        self.c3 = nn.Conv2d(32, 9, 3, padding=1)
        self.shuffle = nn.PixelShuffle(3)

    def forward(self, x):
        x = torch.tanh(self.c2(torch.tanh(self.c1(x))))
        return self.shuffle(self.c3(x))


def conv_in_relu(cin, cout, k, stride):
    return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(cin, cout, k, stride),
                         nn.InstanceNorm2d(cout, affine=True), nn.ReLU())


class StyleTransfer(nn.Module):
    """Fast style transfer: reflection padding, instance norm, upsampling."""

    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(conv_in_relu(3, 32, 9, 1), conv_in_relu(32, 64, 3, 2),
                                  conv_in_relu(64, 128, 3, 2))
        self.res = nn.ModuleList([
            nn.Sequential(conv_in_relu(128, 128, 3, 1), nn.ReflectionPad2d(1),
                          nn.Conv2d(128, 128, 3), nn.InstanceNorm2d(128, affine=True))
            for _ in range(3)])
        self.up1 = conv_in_relu(128, 64, 3, 1)
        self.up2 = conv_in_relu(64, 32, 3, 1)
        self.out = nn.Sequential(nn.ReflectionPad2d(4), nn.Conv2d(32, 3, 9))

    def forward(self, x):
        x = self.down(x)
        for block in self.res:
            x = x + block(x)
        x = self.up1(F.interpolate(x, scale_factor=2, mode="nearest"))
        x = self.up2(F.interpolate(x, scale_factor=2, mode="nearest"))
        return self.out(x)


class ConvBnSilu(nn.Module):
    def __init__(self, cin, cout, k=1, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.silu(self.bn(self.conv(x)))


class YoloLike(nn.Module):
    """A YOLO-style backbone, SPPF (three 5x5 max pools), an upsampled neck."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            ConvBnSilu(3, 16, 3, 2), ConvBnSilu(16, 32, 3, 2), ConvBnSilu(32, 32),
            ConvBnSilu(32, 64, 3, 2), ConvBnSilu(64, 64), ConvBnSilu(64, 128, 3, 2),
            ConvBnSilu(128, 128), ConvBnSilu(128, 256, 3, 2))
        self.sppf1 = ConvBnSilu(256, 128)
        self.sppf2 = ConvBnSilu(512, 256)
        self.lateral = ConvBnSilu(256, 128)
        self.fuse = ConvBnSilu(256, 128, 3)
        self.head = nn.Conv2d(128, 85 * 3, 1)

    def forward(self, x):
        skip = None
        for i, layer in enumerate(self.stem):
            x = layer(x)
            if i == 6:
                skip = x
        y = self.sppf1(x)
        a = F.max_pool2d(y, 5, 1, 2)
        b = F.max_pool2d(a, 5, 1, 2)
        c = F.max_pool2d(b, 5, 1, 2)
        x = self.sppf2(torch.cat([y, a, b, c], 1))
        u = F.interpolate(self.lateral(x), scale_factor=2, mode="nearest")
        return self.head(self.fuse(torch.cat([u, skip], 1)))


class SpeechGRU(nn.Module):
    """Conv1d + BatchNorm1d over 400 frames of 80 mel bins, then a GRU."""

    def __init__(self):
        super().__init__()
        layers, cin = [], 80
        for cout, k in [(256, 11), (256, 11), (384, 13), (512, 17), (512, 29)]:
            layers += [nn.Conv1d(cin, cout, k, padding=k // 2), nn.BatchNorm1d(cout),
                       nn.ReLU()]
            cin = cout
        self.convs = nn.Sequential(*layers)
        self.gru = nn.GRU(512, 256, batch_first=True)
        self.fc = nn.Linear(256, 29)

    def forward(self, x):
        h, _ = self.gru(self.convs(x).transpose(1, 2))
        return F.log_softmax(self.fc(h), -1)


class PreNormEncoder(nn.Module):
    """torch.nn.TransformerEncoder, pre-norm, GELU, over 128 token ids."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True,
                                           activation="gelu", norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 4)
        self.embedding = nn.Embedding(1000, 256)

    def forward(self, ids):
        return self.encoder(self.embedding(ids))


class Mixer(nn.Module):
    """MLP-Mixer: token mixing through transposes, channel mixing."""

    def __init__(self, dim=256, patches=196):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 16, 16)
        self.blocks = nn.ModuleList([nn.ModuleDict(dict(
            n1=nn.LayerNorm(dim), t1=nn.Linear(patches, 384), t2=nn.Linear(384, patches),
            n2=nn.LayerNorm(dim), c1=nn.Linear(dim, 1024), c2=nn.Linear(1024, dim)))
            for _ in range(4)])
        self.head = nn.Linear(dim, 1000)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        for b in self.blocks:
            y = b["n1"](x).transpose(1, 2)
            x = x + b["t2"](F.gelu(b["t1"](y))).transpose(1, 2)
            x = x + b["c2"](F.gelu(b["c1"](b["n2"](x))))
        return self.head(x.mean(1))


def seg(build):
    return lambda: build(weights=None, weights_backbone=None)


tv = torchvision.models
# name: (builder, input shape (None: 128 token ids), opset, export options)
MODELS = {
    "alexnet": (tv.alexnet, (1, 3, 224, 224), 13, {}),
    "vgg11_opset11": (tv.vgg11, (1, 3, 224, 224), 11, {}),
    "resnet18_opset9": (tv.resnet18, (1, 3, 224, 224), 9, {}),
    "mobilenet_v2_b2_opset11": (tv.mobilenet_v2, (2, 3, 224, 224), 11, {}),
    "efficientnet_b0_unfolded": (tv.efficientnet_b0, (1, 3, 224, 224), 13,
                                 {"do_constant_folding": False}),
    "resnet18_training_export": (tv.resnet18, (1, 3, 224, 224), 13,
                                 {"training": torch.onnx.TrainingMode.PRESERVE}),
    "vit_b_16_opset17": (tv.vit_b_16, (1, 3, 224, 224), 17, {}),
    "swin_s": (tv.swin_s, (1, 3, 224, 224), 14, {}),
    "maxvit_t_opset17": (tv.maxvit_t, (1, 3, 224, 224), 17, {}),
    "regnet_y_800mf": (tv.regnet_y_800mf, (1, 3, 224, 224), 13, {}),
    "regnet_y_3_2gf": (tv.regnet_y_3_2gf, (1, 3, 224, 224), 13, {}),
    "mnasnet0_75": (tv.mnasnet0_75, (1, 3, 224, 224), 13, {}),
    "efficientnet_v2_m_480": (tv.efficientnet_v2_m, (1, 3, 480, 480), 13, {}),
    "googlenet_b4": (lambda: tv.googlenet(aux_logits=False, init_weights=True),
                     (4, 3, 224, 224), 13, {}),
    "lraspp_mobilenet_v3_256_opset11": (
        seg(tv.segmentation.lraspp_mobilenet_v3_large), (1, 3, 256, 256), 11, {}),
    "deeplabv3_mobilenet_v3_320": (
        seg(tv.segmentation.deeplabv3_mobilenet_v3_large), (1, 3, 320, 320), 13, {}),
    "fcn_resnet50_320": (seg(tv.segmentation.fcn_resnet50), (1, 3, 320, 320), 13, {}),
    "r2plus1d_18": (tv.video.r2plus1d_18, (1, 3, 8, 112, 112), 13, {}),
    "s3d": (tv.video.s3d, (1, 3, 16, 224, 224), 13, {}),
    "ssdlite320": (seg(tv.detection.ssdlite320_mobilenet_v3_large), (1, 3, 320, 320),
                   13, {}),
    "unet_groupnorm_64": (UNet, (1, 3, 64, 64), 13, {}),
    "espcn_224": (ESPCN, (1, 1, 224, 224), 13, {}),
    "style_transfer_256": (StyleTransfer, (1, 3, 256, 256), 13, {}),
    "yolo_like_320": (YoloLike, (1, 3, 320, 320), 13, {}),
    "speech_conv_gru": (SpeechGRU, (1, 80, 400), 13, {}),
    "prenorm_encoder": (PreNormEncoder, None, 14, {}),
    "mlp_mixer": (Mixer, (1, 3, 224, 224), 13, {}),
}
sys.path.insert(0, HERE)
from held_out_fields import FIELD_MODELS  # noqa: E402 (needs torch, checked above)
MODELS.update(FIELD_MODELS)


def first_output(y):
    """The tensor a model's first output holds (a segmentation model's
    "out", a detector's first list's first field)."""
    while not isinstance(y, torch.Tensor):
        if isinstance(y, dict):
            y = y["out"] if "out" in y else next(iter(y.values()))
        else:
            y = y[0]
    return y


def export(name, out_dir):
    """Writes NAME.onnx, NAME.in (the input's raw bytes) and NAME.ref
    (PyTorch's first output, f32) once; returns the ONNX output's name."""
    build, shape, opset, options = MODELS[name]
    path = os.path.join(out_dir, name)
    if not os.path.exists(path + ".ref"):
        torch.manual_seed(SEED)
        model = build().eval()
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0, 0.05)
            x = (torch.randint(0, 1000, (1, 128)) if shape is None
                 else torch.randn(*shape))
            y = first_output(model(x))
        torch.onnx.export(model, x, path + ".onnx", opset_version=opset,
                          input_names=["x"], **options)
        x.numpy().tofile(path + ".in")
        y.numpy().astype(np.float32).tofile(path + ".ref")
    return onnx.load(path + ".onnx", load_external_data=False).graph.output[0].name


def check(dfgc, name, out_dir):
    """dfg's output against PyTorch's: (relative error, None) or (None, why)."""
    path = os.path.join(out_dir, name)
    output = export(name, out_dir)
    run = subprocess.run([dfgc, "run", path + ".onnx", "--input", f"x={path}.in",
                          "--output", f"{output}={path}.dfg"],
                         capture_output=True, text=True, timeout=900)
    if run.returncode:
        return None, (run.stderr or run.stdout).strip().splitlines()[-1][:160]
    got = np.fromfile(path + ".dfg", dtype=np.float32)
    ref = np.fromfile(path + ".ref", dtype=np.float32)
    if got.size != ref.size:
        return None, f"{got.size} output values, PyTorch gives {ref.size}"
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)), None


def dfg_ms(dfgc, path, iterations):
    out = subprocess.run([dfgc, "bench", path, "--iterations", str(iterations)],
                         capture_output=True, text=True, timeout=900).stdout
    for line in out.splitlines():
        if line.startswith("median"):
            return float(line.split()[1])
    return None


def peer_ms(peer, path, batch, iterations):
    python = os.environ.get("PEER_PYTHON", "/work/venv/bin/python")
    threads = os.environ.get("OMP_NUM_THREADS", "2")
    run = subprocess.run([python, os.path.join(HERE, "peer_bench.py"), peer, path,
                          "x", str(batch), threads, str(iterations), "3"],
                         capture_output=True, text=True, timeout=900)
    try:
        return float(run.stdout.split()[0])
    except (IndexError, ValueError):
        return None


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "—"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    dfgc, out_dir, args = argv[1], argv[2], argv[3:]
    repeats, iterations, names = 3, 15, []
    while args:
        if args[0] in ("--repeats", "--iterations") and len(args) > 1:
            if args[0] == "--repeats":
                repeats = int(args[1])
            else:
                iterations = int(args[1])
            args = args[2:]
        else:
            names.append(args.pop(0))
    names = names or list(MODELS)
    os.makedirs(out_dir, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    print(f"threads: {os.environ['OMP_NUM_THREADS']}, {repeats} interleaved "
          f"fresh-process rounds of {iterations} runs")
    print()
    print("| model | dfg .onnx ms | ONNX Runtime ms | OpenVINO ms | / ORT | / OV "
          "| error vs PyTorch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name in names:
        error, why = check(dfgc, name, out_dir)
        if why:
            print(f"| {name} | | | | | | dfg: {why} |", flush=True)
            continue
        path = os.path.join(out_dir, name + ".onnx")
        shape = MODELS[name][1]
        batch = shape[0] if shape else 1
        times = {"dfg": [], "ort": [], "openvino": []}
        for _ in range(repeats):
            times["dfg"].append(dfg_ms(dfgc, path, iterations))
            for peer in ("ort", "openvino"):
                times[peer].append(peer_ms(peer, path, batch, iterations))
        med = {k: (statistics.median(v) if all(v) else None) for k, v in times.items()}
        cells = [f"{med[k]:.2f}" if med[k] else "failed" for k in times]
        print(f"| {name} | {' | '.join(cells)} | {ratio(med['dfg'], med['ort'])} | "
              f"{ratio(med['dfg'], med['openvino'])} | {error:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
