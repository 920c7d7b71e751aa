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
