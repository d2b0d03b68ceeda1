"""Workloads built to test the workload probe: a deep model with one
operation that depends on the thread count (the positive control of "the
first operation that differs"), one that holds at every level, one that
raises, and a 100-layer step for the memory bound."""

import torch
from torch import nn


class ThreadDependent(nn.Module):
    """Adds a number that depends on the thread count: the operation the
    probe must name, at exactly this line."""

    def forward(self, x):
        return x + torch.get_num_threads() * 1e-3  # PLANTED


def deep(batch: int):
    layers = []
    for i in range(40):
        layers += [nn.Linear(16, 16), nn.Tanh()]
        if i == 27:
            layers.append(ThreadDependent())
    model = nn.Sequential(*layers)
    x = torch.randn(64, 16)[:batch]

    def step():
        model.zero_grad()
        out = model(x)
        out.square().sum().backward()
        return {"output": out, **{f"grad.{n}": p.grad for n, p in model.named_parameters()}}

    return step


def holds(batch: int):
    x = torch.randn(64, 8)[:batch]

    def step():
        return {"output": x * 2 + 1}

    return step


def raises(batch: int):
    def step():
        raise ValueError("the team's bug")  # RAISES

    return step


def hundred(batch: int):
    model = nn.Sequential(*[nn.Linear(32, 32) for _ in range(100)])
    x = torch.randn(64, 32)[:batch]

    def step():
        model.zero_grad()
        out = model(x)
        out.sum().backward()
        return {"output": out}

    return step
