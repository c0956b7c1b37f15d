"""The fourth held-out set (held_out.py's MODELS): small networks in the
shapes of fields the first three sets did not reach, 1-D signals, point
clouds, graphs, generators, sequence-to-sequence, and a video net of full
3-D convolutions.

Each entry is name: (builder, input shape (None: 128 token ids), opset,
export options), as held_out.py's."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class Wav2VecLike(nn.Module):
    """Speech: a strided 1-D conv feature extractor (GroupNorm, GELU), then
    a pre-norm transformer over its frames."""

    def __init__(self):
        super().__init__()
        layers = [nn.Conv1d(1, 128, 10, 5), nn.GroupNorm(128, 128), nn.GELU()]
        for _ in range(4):
            layers += [nn.Conv1d(128, 128, 3, 2), nn.GELU()]
        self.features = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(128)
        self.project = nn.Linear(128, 256)
        layer = nn.TransformerEncoderLayer(256, 4, 1024, 0.0, "gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)

    def forward(self, x):
        h = self.features(x.unsqueeze(1)).transpose(1, 2)
        return self.encoder(self.project(self.norm(h)))


class TextCNN(nn.Module):
    """Sentence classification: embeddings, 1-D convs of widths 3-5, max
    over time."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(1000, 128)
        self.convs = nn.ModuleList([nn.Conv1d(128, 100, k) for k in (3, 4, 5)])
        self.fc = nn.Linear(300, 5)

    def forward(self, ids):
        h = self.embed(ids).transpose(1, 2)
        pooled = [F.relu(c(h)).max(dim=2).values for c in self.convs]
        return self.fc(torch.cat(pooled, 1))


class PointNet(nn.Module):
    """Point clouds: shared per-point MLPs (1x1 1-D convs with batch norm),
    a max over the points, a classifier."""

    def __init__(self):
        super().__init__()
        dims = [3, 64, 128, 1024]
        self.mlp = nn.Sequential(*[m for i in range(3) for m in (
            nn.Conv1d(dims[i], dims[i + 1], 1), nn.BatchNorm1d(dims[i + 1]),
            nn.ReLU())])
        self.head = nn.Sequential(nn.Linear(1024, 256), nn.ReLU(),
                                  nn.Linear(256, 40))

    def forward(self, x):
        return self.head(torch.max(self.mlp(x), 2).values)


class TCN(nn.Module):
    """A temporal conv net: dilated causal 1-D convs (left padding), residual
    blocks."""

    def __init__(self, channels=64, levels=6):
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.Conv1d(channels, channels, 3, dilation=2 ** i) for i in range(levels)])

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            x = x + F.relu(conv(F.pad(x, (2 * 2 ** i, 0))))
        return x


class DCGANGenerator(nn.Module):
    """A GAN generator: transposed convs with batch norm and ReLU, tanh."""

    def __init__(self):
        super().__init__()
        chans = [100, 512, 256, 128, 64]
        layers = []
        for i in range(4):
            layers += [nn.ConvTranspose2d(chans[i], chans[i + 1], 4,
                                          1 if i == 0 else 2, 0 if i == 0 else 1,
                                          bias=False),
                       nn.BatchNorm2d(chans[i + 1]), nn.ReLU()]
        layers += [nn.ConvTranspose2d(64, 3, 4, 2, 1, bias=False), nn.Tanh()]
        self.net = nn.Sequential(*layers)

    def forward(self, z):
        return self.net(z)


class GraphConv(nn.Module):
    """A graph conv net on a fixed graph of 500 nodes: A (X W), ReLU,
    mean over the nodes."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        adjacency = (torch.rand(500, 500, generator=g) < 0.02).float()
        adjacency = adjacency + adjacency.t() + torch.eye(500)
        degree = adjacency.sum(1).rsqrt()
        self.register_buffer("a", degree[:, None] * adjacency * degree[None, :])
        self.layers = nn.ModuleList([nn.Linear(64, 128), nn.Linear(128, 128),
                                     nn.Linear(128, 16)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = self.a @ layer(x)
            x = F.relu(x) if i < 2 else x
        return x.mean(1)


class Seq2Seq(nn.Module):
    """An encoder-decoder transformer: self-attention with a causal mask in
    the decoder, cross-attention to the encoder's output."""

    def __init__(self):
        super().__init__()
        self.model = nn.Transformer(256, 8, 2, 2, 1024, 0.0, batch_first=True)
        self.register_buffer("mask", torch.triu(torch.full((64, 64), float("-inf")), 1))

    def forward(self, x):
        return self.model(x, x, tgt_mask=self.mask)


class SeparableAudio(nn.Module):
    """QuartzNet-like: depthwise 1-D convs of width 13 and 1x1 convs, batch
    norm, ReLU, residuals."""

    def __init__(self, channels=128):
        super().__init__()
        self.stem = nn.Conv1d(64, channels, 11, padding=5)
        self.blocks = nn.ModuleList([nn.Sequential(
            nn.Conv1d(channels, channels, 13, padding=6, groups=channels),
            nn.Conv1d(channels, channels, 1), nn.BatchNorm1d(channels))
            for _ in range(4)])

    def forward(self, x):
        x = F.relu(self.stem(x))
        for block in self.blocks:
            x = F.relu(x + block(x))
        return x


tv = torchvision.models
FIELD_MODELS = {
    "wav2vec_like": (Wav2VecLike, (1, 16000), 14, {}),
    "text_cnn": (TextCNN, None, 13, {}),
    "pointnet": (PointNet, (1, 3, 1024), 13, {}),
    "tcn": (TCN, (1, 64, 1000), 13, {}),
    "dcgan_generator": (DCGANGenerator, (1, 100, 1, 1), 13, {}),
    "graph_conv": (GraphConv, (1, 500, 64), 13, {}),
    "seq2seq_transformer": (Seq2Seq, (1, 64, 256), 14, {}),
    "separable_audio": (SeparableAudio, (1, 64, 400), 13, {}),
    "r3d_18": (tv.video.r3d_18, (1, 3, 8, 112, 112), 13, {}),
    "mc3_18": (tv.video.mc3_18, (1, 3, 8, 112, 112), 13, {}),
}
