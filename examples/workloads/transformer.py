"""A small transformer block's training step: multi-head attention (through
scaled_dot_product_attention), layer norm, a GELU feed-forward, a residual
stream, a mean-squared loss, backward and an AdamW step."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.ff = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        attended = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(b, t, c))
        return x + self.ff(self.norm2(x))


def training_step(batch: int):
    """One step at `batch` sequences of 32 tokens of width 64."""
    model = Block()
    tokens = torch.randn(64, 32, 64)[:batch]
    target = torch.randn(64, 32, 64)[:batch]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        output = model(tokens)
        loss = nn.functional.mse_loss(output, target)
        loss.backward()
        grads = {f"grad.{name}": p.grad.clone() for name, p in model.named_parameters()}
        optimizer.step()
        return {"output": output, "loss": loss, **grads,
                **{f"param.{name}": p.detach().clone() for name, p in model.named_parameters()}}

    return step
