"""The operations the search for counter-examples runs (counterexamples.py),
as Python text over n (the size), dt (the dtype) and the generator g
(search.Op), and the search's planted controls. Imports no torch: the
tests hold every operation's program to a runnable snippet of at most
search.SNIPPET_LINES lines (tests/test_search.py)."""

from __future__ import annotations

from search import CHANNELS_LAST, CONTIGUOUS, FORWARD, STEP, Op

G = "generator=g, dtype=dt"
# The operations, as Python over n, dt and g (search.Op).
OPS: dict[str, Op] = {
    "sum": Op(f"x = torch.randn(n, {G})", "x.sum()", leaves="x", shape="(n,)"),
    "mean": Op(f"x = torch.randn(n, {G})", "x.mean()", leaves="x", shape="(n,)"),
    "var": Op(f"x = torch.randn(n, {G})", "x.var()", leaves="x", shape="(n,)", dtypes=("float32", "float64")),
    "norm": Op(f"x = torch.randn(n, {G})", "x.norm()", leaves="x", shape="(n,)"),
    "sum(-1)": Op(f"x = torch.randn(4, n, {G})", "x.sum(-1)", unit=4, leaves="x", shape="(4, n)"),
    "sum(0)": Op(f"x = torch.randn(n, 8, {G})", "x.sum(0)", unit=8, leaves="x", shape="(n, 8)"),
    "softmax": Op(f"x = torch.randn(8, n, {G})", "torch.softmax(x, -1)", unit=8, leaves="x", shape="(8, n)"),
    "log_softmax": Op(f"x = torch.randn(8, n, {G})", "torch.log_softmax(x, -1)", unit=8, leaves="x",
                      shape="(8, n)"),
    "cumsum": Op(f"x = torch.randn(4, n, {G})", "x.cumsum(-1)", unit=4, leaves="x", shape="(4, n)"),
    "mse_loss": Op(f"x, y = torch.randn(n, 16, {G}), torch.randn(n, 16, {G})", "F.mse_loss(x, y)", unit=16,
                   leaves="x", shape="(n, 16)"),
    "cross_entropy": Op(f"x, y = torch.randn(n, 10, {G}), torch.randint(0, 10, (n,), generator=g)",
                        "F.cross_entropy(x, y)", unit=10, leaves="x", shape="(n, 10)"),
    "layer_norm": Op(f"x, w, b = torch.randn(n, 64, {G}), torch.randn(64, {G}), torch.randn(64, {G})",
                     "F.layer_norm(x, (64,), w, b)", unit=64, leaves="x, w, b", shape="(n, 64)", batched="x"),
    "group_norm": Op(f"x, w, b = torch.randn(n, 8, 4, 4, {G})@CL, torch.randn(8, {G}), torch.randn(8, {G})",
                     "F.group_norm(x, 2, w, b)", unit=128, leaves="x, w, b", shape="(n, 8, 4, 4)",
                     layouts=(CONTIGUOUS, CHANNELS_LAST), batched="x"),
    "batch_norm": Op(f"x, w, b = torch.randn(n, 8, 4, 4, {G})@CL, torch.randn(8, {G}), torch.randn(8, {G})",
                     "F.batch_norm(x, None, None, w, b, training=True)", unit=128, leaves="x, w, b",
                     shape="(n, 8, 4, 4)", layouts=(CONTIGUOUS, CHANNELS_LAST)),
    "linear": Op(f"x, w, b = torch.randn(n, 64, {G}), torch.randn(32, 64, {G}), torch.randn(32, {G})",
                 "F.linear(x, w, b)", unit=64, leaves="x, w, b", shape="(n, 64)", max_n=1 << 15, batched="x"),
    "mm": Op(f"x, w = torch.randn(n, 64, {G}), torch.randn(64, 32, {G})", "torch.mm(x, w)", unit=64,
             leaves="x, w", shape="(n, 64)", max_n=1 << 15, batched="x"),
    "bmm": Op(f"x, y = torch.randn(n, 8, 16, {G}), torch.randn(n, 16, 8, {G})", "torch.bmm(x, y)", unit=128,
              leaves="x, y", shape="(n, 8, 16)", max_n=1 << 13, batched="x, y"),
    "conv1d": Op(f"x, w = torch.randn(n, 4, 64, {G}), torch.randn(8, 4, 5, {G})", "F.conv1d(x, w, padding=2)",
                 unit=256, leaves="x, w", shape="(n, 4, 64)", max_n=1 << 11, batched="x"),
    "conv2d": Op(f"x, w = torch.randn(n, 4, 12, 12, {G})@CL, torch.randn(8, 4, 3, 3, {G})@CL",
                 "F.conv2d(x, w, padding=1)", unit=576, leaves="x, w", shape="(n, 4, 12, 12)", max_n=1 << 10,
                 layouts=(CONTIGUOUS, CHANNELS_LAST), batched="x"),
    "embedding_bag": Op(f"i, t = torch.randint(0, 100, (n, 8), generator=g), torch.randn(100, 16, {G})",
                        "F.embedding_bag(i, t, mode='sum')", unit=8, leaves="t", shape="(n, 8) indices", batched="i"),
    "index_add": Op(f"x, i = torch.randn(n, 16, {G}), torch.randint(0, 16, (n,), generator=g)",
                    "torch.zeros(16, 16, dtype=dt).index_add(0, i, x)", unit=16, leaves="x", shape="(n, 16)"),
    "scatter_add": Op(f"x, i = torch.randn(16, n, {G}), torch.randint(0, 16, (16, n), generator=g)",
                      "torch.zeros(16, 16, dtype=dt).scatter_add(1, i, x)", unit=16, leaves="x", shape="(16, n)"),
    "sdpa": Op(f"q, k, v = (torch.randn(n, 2, 16, 8, {G}) for _ in range(3))",
               "F.scaled_dot_product_attention(q, k, v)", unit=256, leaves="q, k, v", shape="(n, 2, 16, 8)",
               max_n=1 << 12, needs="torch.nn.functional.scaled_dot_product_attention", batched="q, k, v"),
    "cnn step": Op(f"x, y = torch.randn(n, 3, 8, 8, {G})@CL, torch.randint(0, 10, (n,), generator=g)",
                   "list(m.parameters())", unit=192, shape="a batch of n 3x8x8 images", max_n=1 << 10,
                   passes=(STEP,), layouts=(CONTIGUOUS, CHANNELS_LAST),
                   body="torch.manual_seed(0); m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), "
                        "torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(512, 10))"
                        ".to(dt); F.cross_entropy(m(x), y).backward(); torch.optim.SGD(m.parameters(), 0.1).step()"),
    "mlp step": Op(f"x, y = torch.randn(n, 32, {G}), torch.randint(0, 10, (n,), generator=g)",
                   "list(m.parameters())", unit=32, shape="a batch of n rows of 32", max_n=1 << 14, passes=(STEP,),
                   body="torch.manual_seed(0); m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), "
                        "torch.nn.Linear(64, 10)).to(dt); F.cross_entropy(m(x), y).backward(); "
                        "torch.optim.SGD(m.parameters(), 0.1).step()"),
}

# The search's positive controls (planted operations, never PyTorch's),
# for a level whose `reading` differs between its sides: the input plus the
# reading from PLANTED_AT elements on (elementwise: exact in any order, on
# any batch); the same in the state mkldnn off only; the input plus a
# constant. Each is certain to
# vary where it is planted, and certain to hold elsewhere, on a busy machine
# as on an idle one.
PLANTED_AT = 5003
CONTROL_STATE = ("torch.backends.mkldnn.enabled = False",)


def controls(reading: str) -> dict[str, Op]:
    """The planted operations of a level whose sides `reading` tells apart."""
    x = 'x = torch.randn(n, generator=g, dtype=dt)'
    kw = {"passes": (FORWARD,), "dtypes": ("float32",), "max_n": 1 << 16, "batched": "x"}
    return {"planted threshold": Op(x, f"x + ({reading} if n >= {PLANTED_AT} else 0)", **kw),
            "planted state": Op(x, f"x + (0 if torch.backends.mkldnn.enabled else {reading})", **kw),
            "planted holding": Op(x, "x + 2", **kw)}
