"""The model families the ONNX front end is checked on (tests/models/
export.py): each exercises ops the importer composes.

  lstm_lm        embedding, a 2-layer LSTM, a linear head: tokens [16, N]
  dcgan          a DCGAN generator (ConvTranspose2d, BatchNorm, ReLU,
                 Tanh): noise [N, 100, 1, 1] -> [N, 3, 64, 64]
  gpt2_decoder   a 4-layer GPT-2-style causal decoder (a triu mask applied
                 with where, tanh GELU, pre-norm): tokens [N, 32]
  gpt2_small     the same at GPT-2 small's shape (12 layers, hidden 768,
                 12 heads, 50,257 tokens, context 1,024), its output
                 projection tied to the token embedding: tokens [N, 256]
                 (for benchmarks: 124M parameters)
  gpt2_tied      gpt2_decoder with its output projection tied to the token
                 embedding, which the exporter writes a second time,
                 transposed: tokens [N, 32]
  albert_shared  gpt2_tied with one block applied 4 times (ALBERT's shared
                 layers): the exporter reads the shared weights through
                 Identity nodes: tokens [N, 32]
  r3d_18         torchvision's video ResNet (3-D convolutions and pools) on
                 [N, 3, 4, 32, 32]
  fcn_resnet50   torchvision's segmentation FCN (dilated convolutions and a
                 bilinear Resize) on [N, 3, 64, 64]
  int8_cnn       a small CNN quantized as PyTorch exports fake quantization:
                 QuantizeLinear/DequantizeLinear pairs, int8 weights per
                 output channel, activations per tensor in uint8 (after a
                 ReLU) or int8 (signed, nonzero zero points), a residual
                 add: eight test images [8N, 3, 32, 32] -> 10 classes
"""
import torch
import torchvision

FAMILIES = ("lstm_lm", "dcgan", "gpt2_decoder", "gpt2_small", "gpt2_tied",
            "albert_shared", "r3d_18", "fcn_resnet50", "int8_cnn")
VOCAB = 1000
GPT2_VOCAB = 50257


class LstmLanguageModel(torch.nn.Module):
    def __init__(self, emb=128, hidden=256, layers=2):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, emb)
        self.lstm = torch.nn.LSTM(emb, hidden, layers)
        self.head = torch.nn.Linear(hidden, VOCAB)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        return self.head(y)


def dcgan_generator(nz=100, ngf=32):
    chans = [nz, ngf * 8, ngf * 4, ngf * 2, ngf]
    layers = []
    for i in range(4):
        layers += [torch.nn.ConvTranspose2d(chans[i], chans[i + 1], 4,
                                            1 if i == 0 else 2,
                                            0 if i == 0 else 1, bias=False),
                   torch.nn.BatchNorm2d(chans[i + 1]), torch.nn.ReLU(True)]
    layers += [torch.nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False),
               torch.nn.Tanh()]
    return torch.nn.Sequential(*layers)


class CausalBlock(torch.nn.Module):
    def __init__(self, hidden=256, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc = torch.nn.Linear(hidden, 4 * hidden)
        self.fc2 = torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        n, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.reshape(n, s, self.heads, d).transpose(1, 2)
                   for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / d ** 0.5
        future = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)
        scores = torch.where(future, torch.tensor(float("-inf")), scores)
        a = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(n, s, h))
        mlp = torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh")
        return x + self.fc2(mlp)


class Gpt2Decoder(torch.nn.Module):
    def __init__(self, hidden=256, layers=4, context=64, heads=4,
                 vocab=VOCAB, tied=False, shared=False):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, hidden)
        self.wpe = torch.nn.Embedding(context, hidden)
        if shared:  # every layer is one block
            self.blocks = torch.nn.Sequential(
                *[CausalBlock(hidden, heads)] * layers)
        else:
            self.blocks = torch.nn.Sequential(*[CausalBlock(hidden, heads)
                                                for _ in range(layers)])
        self.ln = torch.nn.LayerNorm(hidden)
        self.head = torch.nn.Linear(hidden, vocab, bias=False)
        if tied:  # GPT-2's output projection is its token embedding
            self.head.weight = self.wte.weight

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1])
        x = self.wte(tokens) + self.wpe(positions)
        return self.head(self.ln(self.blocks(x)))


class Segmentation(torch.nn.Module):
    """fcn_resnet50 returns a dict; its 'out' is the [N,21,H,W] map."""

    def __init__(self):
        super().__init__()
        self.fcn = torchvision.models.segmentation.fcn_resnet50(
            weights=None, weights_backbone=None, aux_loss=False)

    def forward(self, x):
        return self.fcn(x)["out"]


class QuantizedConv(torch.nn.Module):
    """A 3x3 convolution whose weights are fake-quantized to int8 per
    output channel (symmetric: zero points 0), scales fixed at creation."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, 3, stride, 1)
        w = self.conv.weight.detach()
        self.register_buffer("w_scale", w.abs().amax(dim=(1, 2, 3)) / 127)
        self.register_buffer("w_zero", torch.zeros(cout, dtype=torch.int32))

    def forward(self, x):
        w = torch.fake_quantize_per_channel_affine(
            self.conv.weight, self.w_scale, self.w_zero, 0, -128, 127)
        return torch.nn.functional.conv2d(x, w, self.conv.bias,
                                          self.conv.stride, self.conv.padding)


class Int8Cnn(torch.nn.Module):
    """Activations fake-quantized per tensor after every layer: uint8 after
    a ReLU, int8 (signed) elsewhere. The scales and zero points come from
    the min/max of a calibration batch (make_int8_cnn)."""

    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([
            QuantizedConv(3, 32), QuantizedConv(32, 64, 2),
            QuantizedConv(64, 64), QuantizedConv(64, 128, 2)])
        self.fc = torch.nn.Linear(128, 10)
        self.ranges = None  # calibrating: a list collecting (min, max)
        self.quant = []     # (scale, zero point, signed) per point

    def q(self, x, signed):
        if self.ranges is not None:
            self.ranges.append((min(x.min().item(), 0.0),
                                max(x.max().item(), 0.0), signed))
            return x
        scale, zero, signed = self.quant[self.point]
        self.point += 1
        lo, hi = (-128, 127) if signed else (0, 255)
        return torch.fake_quantize_per_tensor_affine(x, scale, zero, lo, hi)

    def features(self, x):
        self.point = 0
        x = self.q(x, True)
        x = self.q(torch.relu(self.convs[0](x)), False)
        x = self.q(torch.relu(self.convs[1](x)), False)
        x = self.q(x + self.q(self.convs[2](x), True), True)
        x = self.q(torch.relu(self.convs[3](x)), False)
        return self.q(torch.flatten(
            torch.nn.functional.adaptive_avg_pool2d(x, 1), 1), False)

    def forward(self, x):
        return self.q(self.fc(self.features(x)), True)

    def calibrate(self, x):
        self.ranges = []
        self(x)
        self.quant = []
        for lo, hi, signed in self.ranges:
            scale = (hi - lo) / 255
            zero = round(-lo / scale) - (128 if signed else 0)
            self.quant.append((scale, int(zero), signed))
        self.ranges = None


def make_int8_cnn():
    """Random weights; the head is centred on the calibration images'
    features and scaled to their spread, so that the test images' classes
    differ (on raw random features every image would get the same one)."""
    model = Int8Cnn().eval()
    g = torch.Generator().manual_seed(7)
    images = torch.randn(64, 3, 32, 32, generator=g)
    with torch.no_grad():
        model.calibrate(images)
        f = model.features(images)
        w = model.fc.weight / f.std(dim=0).clamp_min(1e-6)
        model.fc.weight.copy_(w)
        model.fc.bias.copy_(-(f.mean(dim=0) @ w.T))
        model.calibrate(images)
    return model


def make(name):
    if name == "lstm_lm":
        return LstmLanguageModel()
    if name == "dcgan":
        return dcgan_generator()
    if name == "gpt2_decoder":
        return Gpt2Decoder()
    if name == "gpt2_small":
        return Gpt2Decoder(hidden=768, layers=12, context=1024, heads=12,
                           vocab=GPT2_VOCAB, tied=True)
    if name == "gpt2_tied":
        return Gpt2Decoder(tied=True)
    if name == "albert_shared":
        return Gpt2Decoder(tied=True, shared=True)
    if name == "r3d_18":
        return torchvision.models.video.r3d_18(weights=None)
    if name == "int8_cnn":
        return make_int8_cnn()
    return Segmentation()


def example_input(name, batch, seed):
    g = torch.Generator().manual_seed(seed)
    if name == "lstm_lm":
        return torch.randint(0, VOCAB, (16, batch), generator=g)
    if name in ("gpt2_decoder", "gpt2_tied", "albert_shared"):
        return torch.randint(0, VOCAB, (batch, 32), generator=g)
    if name == "gpt2_small":
        return torch.randint(0, GPT2_VOCAB, (batch, 256), generator=g)
    shape = {"dcgan": (batch, 100, 1, 1), "r3d_18": (batch, 3, 4, 32, 32),
             "fcn_resnet50": (batch, 3, 64, 64),
             "int8_cnn": (8 * batch, 3, 32, 32)}[name]
    return torch.randn(*shape, generator=g)
