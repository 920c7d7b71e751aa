"""Small reference models used by the tests, the examples and `amp_mlir.compare`."""

import torch


class TransformerBlock(torch.nn.Module):
    """Pre-norm block: LayerNorm, single-head softmax attention, GELU (tanh) MLP, residuals."""

    def __init__(self, d=16, hidden=32):
        super().__init__()
        nn = torch.nn
        self.ln1 = nn.LayerNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.act = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(hidden, d)
        self.scale = d ** -0.5

    def forward(self, x):
        h = self.ln1(x)
        q, k, v = self.q(h), self.k(h), self.v(h)
        attn = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)
        x = x + self.o(attn @ v)
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class MLP(torch.nn.Module):
    """Linear layers with ReLU between them: ``MLP(1024, 4096, 4096, 1024, 16)``."""

    def __init__(self, *sizes):
        super().__init__()
        layers = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(torch.nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(torch.nn.ReLU())
        self.net = torch.nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class TransformerClassifier(torch.nn.Module):
    """Pre-norm transformer block with multi-head attention and a GELU MLP, mean-pooled over the
    sequence into a linear classifier: the GPU benchmark's second model (d=512, 8 heads, 4x MLP)."""

    def __init__(self, d=512, heads=8, mlp_ratio=4, classes=16):
        super().__init__()
        nn = torch.nn
        assert d % heads == 0
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, mlp_ratio * d)
        self.act = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(mlp_ratio * d, d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        attn = torch.softmax(q @ k.transpose(-2, -1) * (d // h) ** -0.5, dim=-1)
        y = (attn @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        x = x + self.fc2(self.act(self.fc1(self.ln2(x))))
        return self.head(x.mean(dim=1))
