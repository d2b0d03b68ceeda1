"""A small CNN's training step: convolution, batch norm, ReLU, pooling, a
linear head, cross-entropy, backward and an SGD step with momentum."""

import torch
from torch import nn


def training_step(batch: int):
    """One step at `batch` images; the first rows of a larger batch are the
    images of a smaller one (the inputs are drawn at the largest batch)."""
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
        nn.Flatten(), nn.Linear(32 * 16, 10))
    images = torch.randn(64, 3, 16, 16)[:batch]
    labels = torch.randint(0, 10, (64,))[:batch]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step():
        optimizer.zero_grad()
        output = model(images)
        loss = nn.functional.cross_entropy(output, labels)
        loss.backward()
        grads = {f"grad.{name}": p.grad.clone() for name, p in model.named_parameters()}
        optimizer.step()
        return {"output": output, "loss": loss, **grads,
                **{f"param.{name}": p.detach().clone() for name, p in model.named_parameters()}}

    return step

