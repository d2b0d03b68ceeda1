"""use_deterministic_algorithms's own list, read from the torch under test
and checked entry by entry.

Every release's docstring of torch.use_deterministic_algorithms lists the
operations that "will act deterministically when mode=True" and those that
"will throw a RuntimeError when mode=True" (1.13 adds the cuBLAS ones that
raise unless CUBLAS_WORKSPACE_CONFIG is set), each with its condition. This
module parses that text into entries (parse(), no torch needed) and checks
each entry on a device of this machine (run_entry(), in a child process,
with torch):

- throws: with mode=True a RuntimeError (its text and whether it names the
  operation), with warn_only=True a warning and a result, with mode=False a
  result;
- deterministic: with mode=True the digests of repeated runs on one and two
  threads; with mode=False the same on inputs whose accumulation order
  matters (duplicate indices, two threads): the positive control.

An entry that names several forms (interpolate's modes, scatter_reduce's
reductions, "floating point or complex" dtypes: forms()) is checked form by
form, each recorded under its label ("mode='linear'"). Where PyTorch cannot
run an operation at all on a device or in a form (no kernel for that
backend or dtype: cannot_run()), each run records PyTorch's reason beside
its error, which is then not the alert.

Beyond the list, BEYOND names CPU operations that accumulate and that the
list does not name; each is run the same way without the mode.

Every entry's check is also run once on the CPU without the mode (smoke()),
whatever devices the entry names, so that the checks of the CUDA and MPS
entries are known to run before a GPU runs them.

It records what it saw; the report (reports/documented.py) decides. An
entry whose condition has words the parser does not know is kept, marked
not understood, with its text.

    python3 documented.py list            the entries, as JSON
    python3 documented.py run ID          one entry's (or beyond:OP's) check, as JSON
    python3 documented.py run START ID... (a child of `all`) the entries from the START-th on
    python3 documented.py all             every entry, in child processes that take
                                          many each (one crash or hang costs one entry)

BACKENDCHECK_PROBE_FAULT=documented:ID makes that entry's check raise, for
the test that such a failure is the harness's error (reports/tests/probe_error.py).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sys
import warnings
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import children
from common import digest, first_line, fresh_order

# The headers of the lists, and what their entries promise.
HEADERS = (
    (re.compile(r"will act\s+deterministically when\s+``mode=True``"), "deterministic", {}),
    (re.compile(r"will throw a\s+:class:`RuntimeError`\s+when\s+``mode=True``"), "throws", {}),
    # 1.13: the cuBLAS operations, which raise unless CUBLAS_WORKSPACE_CONFIG is set.
    (re.compile(r"will be raised from these operations when called with CUDA tensors"), "throws",
     {"devices": ["cuda"], "conditions": {"CUBLAS_WORKSPACE_CONFIG": "unset"}}),
)
DEVICE = r"(CPU|CUDA|MPS)"
# Phrases of a condition, each with what it means; whatever is left over
# after them (but filler) makes the entry not understood.
PHRASES: tuple[tuple[str, Any], ...] = (
    (rf"when attempting to differentiate (?:a |an )?{DEVICE} tensor", lambda m: {"backward": True, "devices": [m[1]]}),
    (r"when attempting to differentiate", lambda m: {"backward": True}),
    (r"that requires grad", lambda m: {"backward": True}),
    (rf"(?:when |with )?called on (?:a |an )?(sparse-dense )?{DEVICE}(?: or {DEVICE})? tensors?",
     lambda m: {"devices": [d for d in (m[2], m[3]) if d], **({"conditions": {"layout": "sparse-dense"}} if m[1] else {})}),
    (r"and the index is a list of tensors", lambda m: {"conditions": {"index": "list of tensors"}}),
    (r"(?:with|when) ``accumulate=(True|False)``", lambda m: {"conditions": {"accumulate": m[1] == "True"}}),
    (r"when ``reduce='(\w+)'`` or ``reduce='(\w+)'``", lambda m: {"conditions": {"reduce": [m[1], m[2]]}}),
    (r"with ``reduce='(\w+)'\\?'(\w+)'``", lambda m: {"conditions": {"reduce": [m[1], m[2]]}}),
    (r"(?:when|with) ``reduce='(\w+)'``", lambda m: {"conditions": {"reduce": [m[1]]}}),
    (r"when dtype is floating point or complex", lambda m: {"conditions": {"dtype": "floating"}}),
    (r"with floating or complex dtype", lambda m: {"conditions": {"dtype": "floating"}}),
    (r"when `src` type is Tensor", lambda m: {"conditions": {"src": "tensor"}}),
    (r"when ``mode='(\w+)'``", lambda m: {"conditions": {"mode": m[1]}}),
    (r"and ``weights`` tensor is given", lambda m: {"conditions": {"weights": True}}),
    (r"with indices output", lambda m: {"conditions": {"indices": True}}),
    (r"when called with a quantized tensor", lambda m: {"conditions": {"quantized": True}}),
    (r"one of the following modes is used:((?:\s*- ``\w+``)+)",
     lambda m: {"conditions": {"mode": re.findall(r"``(\w+)``", m[1])}}),
)
FILLER = re.compile(r"\b(and|when|with|or|a|an|the)\b|[,.:]")
OP = re.compile(r":(?:class|func|meth):`(?:~)?([\w.]+)`")


@dataclass
class Entry:
    id: str
    list: str                      # deterministic or throws
    text: str                      # the entry as the docstring words it, on one line
    ops: list[str]
    devices: list[str]             # cpu, cuda, mps; every device when the entry names none
    backward: bool = False
    conditions: dict[str, Any] = field(default_factory=dict)
    understood: bool = True
    leftover: str = ""             # the words the parser did not know


def _entry_id(kind: str, ops: list[str], devices: list[str], backward: bool, conditions: dict[str, Any]) -> str:
    """Stable across releases that word an entry differently: what it means."""
    cond = ",".join(f"{k}={v}" for k, v in sorted(conditions.items()))
    return f"{kind}:{'+'.join(ops)}:{'/'.join(devices) or 'any'}{':backward' if backward else ''}" + \
        (f":{cond}" if cond else "")


def parse_entry(kind: str, text: str, defaults: dict[str, Any]) -> Entry:
    text = " ".join(text.split())
    ops = OP.findall(text.split(" when ")[0].split(" with ")[0]) or OP.findall(text)[:1]
    rest = OP.sub("", text)
    devices = list(defaults.get("devices", []))
    conditions = dict(defaults.get("conditions", {}))
    backward = False
    for pattern, meaning in PHRASES:
        for m in list(re.finditer(pattern, rest)):
            got = meaning(m)
            backward |= got.get("backward", False)
            devices += [d.lower() for d in got.get("devices", []) if d.lower() not in devices]
            conditions.update(got.get("conditions", {}))
        rest = re.sub(pattern, " ", rest)
    leftover = " ".join(FILLER.sub(" ", rest).split())
    understood = bool(ops) and not leftover
    entry_id = _entry_id(kind, ops, devices, backward, conditions) if understood else \
        f"{kind}:not-understood:{hashlib.sha256(text.encode()).hexdigest()[:10]}"
    return Entry(entry_id, kind, text, ops, devices, backward, conditions, understood, leftover)


def parse(doc: str) -> list[Entry]:
    """Every `*` bullet of the docstring, each under the list whose header
    precedes it; a bullet under no known header is kept, not understood."""
    entries: list[Entry] = []
    kind, defaults, bullet, indent = "", {}, None, 0
    lines = (doc or "").splitlines()

    def flush() -> None:
        nonlocal bullet
        if bullet is not None:
            entry = parse_entry(kind or "unknown", " ".join(bullet), defaults)
            if not kind:
                entry.understood, entry.leftover = False, "under no header this parser knows"
                entry.id = f"unknown:not-understood:{hashlib.sha256(entry.text.encode()).hexdigest()[:10]}"
            entries.append(entry)
        bullet = None

    paragraph, listed = "", False
    for line in lines:
        stripped = line.strip()
        here = len(line) - len(line.lstrip())
        if stripped.startswith("* "):
            flush()
            bullet, indent, listed = [stripped[2:]], here, True
            continue
        if bullet is not None and (stripped == "" or here > indent):
            if stripped:
                bullet.append(stripped)
            continue
        flush()
        if not stripped:
            paragraph = ""
            continue
        if not paragraph and listed:
            kind, defaults, listed = "", {}, False  # a paragraph after a list ends it
        paragraph = (paragraph + " " + stripped).strip()
        for pattern, name, extra in HEADERS:
            if pattern.search(paragraph):
                kind, defaults = name, extra
                break
    flush()
    # Entries with the same meaning (two wordings of one thing) stay apart.
    seen: dict[str, int] = {}
    for e in entries:
        seen[e.id] = seen.get(e.id, 0) + 1
        if seen[e.id] > 1:
            e.id += f"#{seen[e.id]}"
    return entries


# The dtypes a condition's class names, one of each kind: "floating point or
# complex" is checked on a float32 and a complex64 tensor.
DTYPES = {"floating": ["float32", "complex64"]}


def forms(entry: Entry) -> list[dict[str, Any]]:
    """The forms an entry names, each checked on its own: every combination
    of its conditions that name several values (a list of modes or
    reductions, a class of dtypes), as condition -> one value; [{}] when it
    names one form."""
    axes = []
    for key, value in entry.conditions.items():
        values = value if isinstance(value, list) else DTYPES.get(value, []) if key == "dtype" else []
        if len(values) > 1:
            axes.append([(key, v) for v in values])
    return [dict(combination) for combination in itertools.product(*axes)]


def form_label(form: dict[str, Any]) -> str:
    """A form as the user writes it: "mode='linear'", "dtype=torch.complex64";
    "" for an entry's only form."""
    return ", ".join(f"dtype=torch.{v}" if k == "dtype" else f"{k}={v!r}" for k, v in form.items())


# --- Checks, with torch ------------------------------------------------------

# CPU operations that accumulate and that the list does not name.
ONLY = "BACKENDCHECK_DOCUMENTED_ONLY"
BEYOND = ("torch.Tensor.scatter_add_", "torch.Tensor.index_add_", "torch.Tensor.scatter_reduce_",
          "torch.nn.EmbeddingBag", "torch.nn.functional.interpolate", "torch.histc", "torch.bincount",
          "torch.cumsum")
REPEATS = 5


def _runners(torch):  # noqa: C901 - one small function per operation
    """op -> fn(device, entry, gen) returning the tensors whose bits are
    compared. Inputs have duplicate indices and enough elements that the
    order of accumulation shows in the bits; backward entries return grads."""
    F = torch.nn.functional

    def rand(*shape, dev, gen, grad=False, dtype=torch.float32):
        t = torch.randn(*shape, generator=gen, dtype=dtype).to(dev)
        return t.requires_grad_(grad)

    def one(e, key, default):
        """One form's value of a condition (the first, where a list is left)."""
        value = e.conditions.get(key, default)
        return value[0] if isinstance(value, list) else value

    def dtype(e):
        return {"complex64": torch.complex64}.get(one(e, "dtype", "float32"), torch.float32)

    def dup_index(n, high, dev, gen):
        return torch.randint(0, high, (n,), generator=gen).to(dev)

    def grads(out, *inputs):
        out.backward(torch.ones_like(out))
        return [out.detach()] + [i.grad for i in inputs]

    def module(name, x_shape, **kw):
        def run(dev, e, gen):
            x = rand(*x_shape, dev=dev, gen=gen, grad=e.backward)
            m = getattr(torch.nn, name)(**kw).to(dev)
            y = m(x)
            y = y[0] if isinstance(y, tuple) else y
            return grads(y, x) if e.backward else [y]
        return run

    def conv(name, dims):
        def run(dev, e, gen):
            x = rand(4, 8, *([12] * dims), dev=dev, gen=gen, grad=True)
            m = getattr(torch.nn, name)(8, 8, 3).to(dev)
            y = m(x)
            return grads(y, x) + [p.grad for p in m.parameters()]
        return run

    def unpool(dims):
        def run(dev, e, gen):
            x = rand(2, 4, *([8] * dims), dev=dev, gen=gen)
            pool = getattr(F, f"max_pool{dims}d")
            y, idx = pool(x, 2, return_indices=True)
            return [getattr(F, f"max_unpool{dims}d")(y, idx, 2)]
        return run

    def index_put(dev, e, gen):
        x = torch.zeros(64, device=dev, dtype=dtype(e))
        return [x.index_put((dup_index(100000, 64, dev, gen),), rand(100000, dev=dev, gen=gen, dtype=dtype(e)),
                            accumulate=bool(e.conditions.get("accumulate", False)))]

    def put(dev, e, gen):
        x = torch.zeros(64, device=dev)
        return [x.put_(dup_index(100000, 64, dev, gen), rand(100000, dev=dev, gen=gen),
                       accumulate=bool(e.conditions.get("accumulate", False)))]

    def getitem(dev, e, gen):
        x = rand(64, dev=dev, gen=gen, grad=True)
        return grads(x[[dup_index(100000, 64, dev, gen)]], x)

    def index_copy(dev, e, gen):
        return [torch.zeros(64, 8, device=dev).index_copy(0, dup_index(4096, 64, dev, gen), rand(4096, 8, dev=dev, gen=gen))]

    def scatter_add(dev, e, gen):
        return [torch.zeros(8, 64, device=dev).scatter_add_(1, dup_index(8 * 20000, 64, dev, gen).view(8, 20000),
                                                            rand(8, 20000, dev=dev, gen=gen))]

    def scatter(dev, e, gen):
        return [torch.zeros(8, 64, device=dev).scatter_(1, dup_index(8 * 4096, 64, dev, gen).view(8, 4096),
                                                        rand(8, 4096, dev=dev, gen=gen))]

    def scatter_reduce(dev, e, gen):
        reduce = one(e, "reduce", "sum")
        return [torch.zeros(8, 64, device=dev).scatter_reduce_(1, dup_index(8 * 20000, 64, dev, gen).view(8, 20000),
                                                               rand(8, 20000, dev=dev, gen=gen), reduce)]

    def index_add(dev, e, gen):
        return [torch.zeros(64, 8, device=dev).index_add_(0, dup_index(20000, 64, dev, gen), rand(20000, 8, dev=dev, gen=gen))]

    def index_reduce(dev, e, gen):
        reduce = one(e, "reduce", "prod")
        return [torch.ones(64, 8, device=dev, dtype=dtype(e)).index_reduce_(
            0, dup_index(4096, 64, dev, gen), rand(4096, 8, dev=dev, gen=gen, dtype=dtype(e)), reduce)]

    def gather(dev, e, gen):
        x = rand(64, 32, dev=dev, gen=gen, grad=True)
        return grads(torch.gather(x, 0, dup_index(4096 * 32, 64, dev, gen).view(4096, 32)), x)

    def index_select(dev, e, gen):
        x = rand(64, 32, dev=dev, gen=gen, grad=True)
        return grads(torch.index_select(x, 0, dup_index(20000, 64, dev, gen)), x)

    def repeat_interleave(dev, e, gen):
        x = rand(64, 32, dev=dev, gen=gen, grad=True)
        return grads(torch.repeat_interleave(x, 64, dim=0), x)

    def embedding(dev, e, gen):
        m = torch.nn.Embedding(64, 32).to(dev)
        y = m(dup_index(20000, 64, dev, gen))
        return grads(y) + [m.weight.grad]

    def embedding_bag(dev, e, gen):
        m = torch.nn.EmbeddingBag(64, 32, mode=e.conditions.get("mode", "mean")).to(dev)
        y = m(dup_index(20000, 64, dev, gen).view(1000, 20))
        return grads(y) + [m.weight.grad]

    def interpolate(dev, e, gen):
        mode = one(e, "mode", "bilinear")
        dims = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode, 2)
        x = rand(2, 4, *([8] * dims), dev=dev, gen=gen, grad=True)
        return grads(F.interpolate(x, scale_factor=2.5, mode=mode, align_corners=False), x)

    def grid_sample(dev, e, gen):
        x = rand(2, 4, 16, 16, dev=dev, gen=gen, grad=True)
        grid = (torch.rand(2, 64, 64, 2, generator=gen) * 0.2).to(dev)  # many samples on few pixels
        return grads(F.grid_sample(x, grid, align_corners=False), x)

    def nll_loss(dev, e, gen):
        x = rand(4096, 16, dev=dev, gen=gen, grad=True)
        return grads(F.nll_loss(F.log_softmax(x, 1), dup_index(4096, 16, dev, gen)), x)

    def ctc_loss(dev, e, gen):
        x = rand(50, 16, 20, dev=dev, gen=gen).log_softmax(2).detach().requires_grad_()
        targets = torch.randint(1, 20, (16, 30), generator=gen).to(dev)
        loss = F.ctc_loss(x, targets, torch.full((16,), 50, dtype=torch.long), torch.full((16,), 30, dtype=torch.long))
        return grads(loss, x)

    def histc(dev, e, gen):
        return [torch.histc(rand(100000, dev=dev, gen=gen), bins=64)]

    def bincount(dev, e, gen):
        weights = rand(100000, dev=dev, gen=gen) if e.conditions.get("weights", True) else None
        return [torch.bincount(dup_index(100000, 64, dev, gen), weights=weights)]

    def median(dev, e, gen):
        return list(torch.median(rand(64, 4096, dev=dev, gen=gen), dim=1))

    def kthvalue(dev, e, gen):
        return list(torch.kthvalue(rand(64, 4096, dev=dev, gen=gen), 7, dim=1))

    def cumsum(dev, e, gen):
        return [torch.cumsum(rand(8, 100000, dev=dev, gen=gen, dtype=dtype(e)), dim=1)]

    def bmm(dev, e, gen):
        a = rand(4, 64, 64, dev=dev, gen=gen)
        if e.conditions.get("layout") == "sparse-dense":
            a = a.to_sparse()
        return [torch.bmm(a, rand(4, 64, 64, dev=dev, gen=gen))]

    def mm(dev, e, gen):
        return [torch.mm(rand(256, 256, dev=dev, gen=gen), rand(256, 256, dev=dev, gen=gen))]

    def mv(dev, e, gen):
        return [torch.mv(rand(256, 256, dev=dev, gen=gen), rand(256, dev=dev, gen=gen))]

    def resize(dev, e, gen):
        q = torch.quantize_per_tensor(rand(16, dev=dev, gen=gen), 0.1, 0, torch.quint8)
        return [q.resize_(64).int_repr()]

    runners = {
        "torch.Tensor.index_put": index_put, "torch.Tensor.put_": put, "torch.Tensor.__getitem__": getitem,
        "torch.Tensor.index_copy": index_copy, "torch.Tensor.scatter_add_": scatter_add,
        "torch.Tensor.scatter": scatter, "torch.Tensor.scatter_reduce": scatter_reduce,
        "torch.Tensor.scatter_reduce_": scatter_reduce, "torch.index_add": index_add,
        "torch.Tensor.index_add_": index_add, "torch.Tensor.index_reduce": index_reduce, "torch.gather": gather,
        "torch.index_select": index_select, "torch.repeat_interleave": repeat_interleave,
        "torch.nn.Embedding": embedding, "torch.nn.EmbeddingBag": embedding_bag,
        "torch.nn.functional.interpolate": interpolate, "torch.nn.functional.grid_sample": grid_sample,
        "torch.nn.NLLLoss": nll_loss, "torch.nn.CTCLoss": ctc_loss, "torch.histc": histc,
        "torch.bincount": bincount, "torch.median": median, "torch.kthvalue": kthvalue, "torch.cumsum": cumsum,
        "torch.bmm": bmm, "torch.mm": mm, "torch.mv": mv, "torch.Tensor.resize_": resize,
        "torch.nn.AvgPool3d": module("AvgPool3d", (2, 4, 8, 8, 8), kernel_size=3, stride=1),
        "torch.nn.AdaptiveAvgPool2d": module("AdaptiveAvgPool2d", (2, 4, 17, 17), output_size=5),
        "torch.nn.AdaptiveAvgPool3d": module("AdaptiveAvgPool3d", (2, 4, 9, 9, 9), output_size=4),
        "torch.nn.AdaptiveMaxPool2d": module("AdaptiveMaxPool2d", (2, 4, 17, 17), output_size=5),
        "torch.nn.MaxPool2d": module("MaxPool2d", (2, 4, 16, 16), kernel_size=3, stride=1),
        "torch.nn.MaxPool3d": module("MaxPool3d", (2, 4, 8, 8, 8), kernel_size=3, stride=1),
        "torch.nn.FractionalMaxPool2d": module("FractionalMaxPool2d", (2, 4, 16, 16), kernel_size=3,
                                               output_size=8, _random_samples=None),
        "torch.nn.FractionalMaxPool3d": module("FractionalMaxPool3d", (2, 4, 9, 9, 9), kernel_size=3,
                                               output_size=4, _random_samples=None),
        "torch.nn.MaxUnpool1d": unpool(1), "torch.nn.MaxUnpool2d": unpool(2), "torch.nn.MaxUnpool3d": unpool(3),
    }
    for dims in (1, 2, 3):
        runners[f"torch.nn.Conv{dims}d"] = conv(f"Conv{dims}d", dims)
        runners[f"torch.nn.ConvTranspose{dims}d"] = conv(f"ConvTranspose{dims}d", dims)
        for pad in ("Reflection", "Replication"):
            shape = (2, 4) + (12,) * dims
            runners[f"torch.nn.{pad}Pad{dims}d"] = module(f"{pad}Pad{dims}d", shape, padding=3)
    return runners


def _devices_here(torch) -> list[str]:
    out = ["cpu"]
    if torch.cuda.is_available():
        out.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        out.append("mps")
    return out


# The kernel one form of an operation runs, where PyTorch's alert names it and
# not the operation: interpolate's mode='linear' raises from
# upsample_linear1d_backward_out_cuda.
FORM_KERNELS = {"torch.nn.functional.interpolate": ("mode", "upsample_{}")}


def _kernel(op: str, conditions: dict[str, Any]) -> str:
    """The kernel of FORM_KERNELS that one form of `op` runs, or ""."""
    key, pattern = FORM_KERNELS.get(op, ("", ""))
    value = conditions.get(key)
    return pattern.format(value) if isinstance(value, str) else ""


def _names_op(message: str, op: str, kernel: str = "") -> bool:
    """Whether an alert's text names the operation: the op's last name, or
    the kernel it maps to (max_unpooling2d for MaxUnpool2d), compared in
    lower case without underscores, on a common stem of six letters; or
    names `kernel`, the kernel of its form, whole (upsample_linear, not
    upsample_bilinear)."""
    if kernel and kernel in message.lower():
        return True
    stem = re.sub(r"[^a-z0-9]", "", op.rsplit(".", 1)[-1].lower())
    words = [re.sub(r"[^a-z0-9]", "", w.lower()) for w in re.split(r"[\s'`\"(),]+", message)]
    for w in words:
        common = 0
        while common < min(len(w), len(stem)) and w[common] == stem[common]:
            common += 1
        if w and (stem in w or common >= min(6, len(stem))):
            return True
    return False


# PyTorch's words for an operation it has no kernel for, on a backend or
# for a dtype (NotImplementedError since 1.x; RuntimeError in some releases).
NO_KERNEL = re.compile(r"Could not run '[^']*' with arguments from the '[^']*' backend"
                       r"|not implemented for '[^']*'|not currently implemented for the \w+ device")


def cannot_run(e: BaseException, torch) -> str:
    """PyTorch's reason ("NotImplementedError: Could not run 'aten::resize_'
    with arguments from the 'QuantizedCUDA' backend") when `e` says that
    PyTorch cannot run the operation at all on this device or in this form
    (it has no kernel for that backend or dtype): PyTorch's refusal
    (children.refusal) that is a NotImplementedError or words it so
    (NO_KERNEL). "" for anything else: the determinism alert, another
    refusal, the probe's own error."""
    said = children.refusal(e, torch)
    if not said or not (isinstance(e, NotImplementedError) or NO_KERNEL.search(str(e))):
        return ""
    kind, _, message = said.partition(": ")
    sentence = re.split(r"\.(?:\s|$)", message, maxsplit=1)[0]  # its first sentence
    return f"{kind}: {sentence}" if sentence else kind


def _run(torch, fn, mode: bool, warn_only: bool = False) -> dict[str, Any]:
    """One call under the mode: its digest, the RuntimeError PyTorch raised
    (children.call: an exception of the check's own code is the harness's
    error) with its type and, where PyTorch cannot run the operation here
    at all, its reason (cannot_run), the warnings it gave."""
    torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    bits, error, kind, no_kernel = "", "", "", ""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                bits = digest(children.call(fn, torch))
            except children.Refused as e:
                said = str(e.__cause__).strip()  # PyTorch's own exception
                error, kind = said.splitlines()[0] if said else e.kind, e.kind
                no_kernel = cannot_run(e.__cause__, torch)
        texts = [str(w.message).splitlines()[0] for w in caught
                 if "deterministic" in str(w.message)]
    finally:
        torch.use_deterministic_algorithms(False)
    return {"digest": bits, "error": error, "kind": kind, "cannot_run": no_kernel, "warnings": texts[:3]}


def _repeat(torch, fn, mode: bool) -> dict[str, Any]:
    """The distinct digests of REPEATS runs on each of one and two threads
    (the inputs are seeded: the same every run)."""
    digests: dict[str, list[str]] = {}
    errors, no_kernel = [], ""
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for _ in range(REPEATS):
                r = _run(torch, fn, mode)
                if r["error"]:
                    errors.append(r["error"])
                    no_kernel = no_kernel or r["cannot_run"]
                    break
                digests.setdefault(str(threads), []).append(r["digest"])
    finally:
        torch.set_num_threads(before)
    seen = sorted({d for ds in digests.values() for d in ds})
    return {"runs": REPEATS, "digests": {t: sorted(set(ds)) for t, ds in digests.items()}, "distinct": len(seen),
            "error": errors[0] if errors else "", "cannot_run": no_kernel}


def run_entry(entry_id: str) -> dict[str, Any]:
    """The observations of one entry (or of beyond:OP) on each device that
    the entry names and this machine has."""
    import torch
    if os.environ.get("BACKENDCHECK_PROBE_FAULT") == f"documented:{entry_id}":
        raise AttributeError(f"injected by BACKENDCHECK_PROBE_FAULT=documented:{entry_id}")
    runners = _runners(torch)
    if entry_id.startswith("beyond:"):
        op = entry_id.split(":", 1)[1]
        entry = Entry(entry_id, "beyond", op, [op], ["cpu"])
    else:
        entries = {e.id: e for e in parse(torch.use_deterministic_algorithms.__doc__)}
        if entry_id not in entries:
            raise KeyError(f"no entry {entry_id!r} in the docstring of torch {torch.__version__}")
        entry = entries[entry_id]
    here = _devices_here(torch)
    named = entry.devices or ["cpu", "cuda", "mps"]
    out: dict[str, Any] = {"id": entry.id, "torch": torch.__version__, "devices": {}}
    missing = [op for op in entry.ops if op not in runners]
    for device in named:
        if device not in here:
            out["devices"][device] = {"not_evaluated": f"no {device.upper()} device on this machine"}
            continue
        if missing:
            out["devices"][device] = {"not_evaluated": f"no check written for {', '.join(missing)}"}
            continue
        seen: dict[str, Any] = {}
        for op in entry.ops:
            # One record per form, under its label; an entry of one form
            # keeps the record of before forms.
            checked = {form_label(form): _check(torch, runners[op], op, replace(entry, conditions={
                **entry.conditions, **form}), device) for form in forms(entry)}
            seen[op] = checked[""] if list(checked) == [""] else {"forms": checked}
        out["devices"][device] = seen
    return out


def _check(torch, runner, op: str, entry: Entry, device: str) -> dict[str, Any]:
    """The observations of one operation of an entry (one form: `entry`'s
    conditions name one value each) on one device."""
    gen = torch.Generator().manual_seed(20261124)
    state = gen.get_state()

    def fn():
        gen.set_state(state)
        torch.manual_seed(20261124)  # the parameters of modules, drawn from the global generator
        return runner(device, entry, gen)
    if entry.list == "throws":
        seen = {"mode_true": _run(torch, fn, True), "warn_only": _run(torch, fn, True, warn_only=True),
                "mode_false": _run(torch, fn, False)}
        seen["mode_true"]["names_op"] = _names_op(seen["mode_true"]["error"], op, _kernel(op, entry.conditions))
        return seen
    if entry.list == "deterministic":
        return {"mode_true": _repeat(torch, fn, True), "control": _repeat(torch, fn, False)}
    return {"mode_false": _repeat(torch, fn, False)}


def smoke(torch, entries: list[Entry]) -> dict[str, str]:
    """Every entry's check run once on the CPU without the mode, whatever
    devices the entry names: the checks of the CUDA and MPS entries are
    proven to run here before a GPU runs them, each form of an entry that
    names several. op (with the form's label) -> the failure, for those that
    failed; a form PyTorch has no CPU kernel for (cannot_run) is no failure
    of the check, and is not proven here."""
    runners = _runners(torch)
    failed: dict[str, str] = {}
    for e in entries:
        for op, form in itertools.product(e.ops if e.understood else [], forms(e)):
            name = f"{op} [{form_label(form)}]" if form else op
            if name in failed or op not in runners:
                continue
            torch.manual_seed(1)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    digest(runners[op]("cpu", replace(e, conditions={**e.conditions, **form}),
                                        torch.Generator().manual_seed(1)))
            except Exception as ex:  # noqa: BLE001 - any failure of a check is the harness's
                said = str(ex).strip()
                if not cannot_run(ex, torch):
                    failed[name] = f"{type(ex).__name__}: {first_line(said)}"
    return failed


def control(torch) -> dict[str, Any]:
    """The positive control of the check itself: a float32 sum over a fresh
    random order each run, which the same repeat-and-threads digests must see
    vary (else they could not see an operation vary either)."""
    values = torch.randn(200000, generator=torch.Generator().manual_seed(7)) * 1e4

    def shuffled_sum():
        return [values[fresh_order(torch, values.numel())].sum()]
    return _repeat(torch, shuffled_sum, False)


def run_all(python: str, hang_s: float = 60.0) -> dict[str, Any]:
    """Every entry of this torch's docstring, and every BEYOND operation,
    checked in child processes of `python` that each take many entries (a
    crash or a hang costs that entry only, recorded as its error, and a new
    child goes on from the next: children.py); entries with nothing to run
    here are recorded without a process."""
    import torch
    doc = torch.use_deterministic_algorithms.__doc__ or ""
    entries = parse(doc)
    here = _devices_here(torch)
    results: dict[str, Any] = {}
    ids = [e.id for e in entries if e.understood] + [f"beyond:{op}" for op in BEYOND]
    # A test of the harness itself may check a few entries only (ONLY, comma
    # separated ids): the rest are recorded as not run.
    only = [x for x in os.environ.get(ONLY, "").split(",") if x]
    ids = [i for i in ids if i in only] if only else ids
    wanted = {e.id: e for e in entries}
    to_run = []
    for entry_id in ids:
        e = wanted.get(entry_id)
        if e is not None and not any(d in here for d in (e.devices or ["cpu"])):
            results[entry_id] = {"id": entry_id, "devices": {d: {"not_evaluated": f"no {d.upper()} device on this machine"}
                                                             for d in e.devices}}
        else:
            to_run.append(entry_id)
    for r in children.run_resuming(lambda start: [python, __file__, "run", str(start), *to_run], len(to_run), hang_s):
        results[r["id"]] = {"id": r["id"], "error": r["error"]} if "error" in r else r
    return {"torch": torch.__version__, "devices_here": here, "control": control(torch),
            "smoke_failures": smoke(torch, entries),
            "entries": [dict(asdict(e), result=results.get(e.id)) for e in entries],
            "beyond": [results[f"beyond:{op}"] for op in BEYOND if f"beyond:{op}" in results],
            "settings": _settings(torch)}


def _settings(torch) -> dict[str, Any]:
    """torch.utils.deterministic, where the version has it: its settings, their
    docstrings, and what torch.empty returns with fill_uninitialized_memory on
    and off under the mode."""
    module = getattr(getattr(torch, "utils", None), "deterministic", None)
    if module is None:
        try:
            import torch.utils.deterministic as module  # noqa: F811
        except ImportError:
            return {"absent": f"torch.utils.deterministic is not in torch {torch.__version__}"}
    prop = getattr(type(module), "fill_uninitialized_memory", None)
    doc = " ".join((getattr(prop, "__doc__", "") or "").split())
    seen = {}
    default = module.fill_uninitialized_memory
    try:
        for fill in (True, False):
            module.fill_uninitialized_memory = fill
            torch.use_deterministic_algorithms(True)
            try:
                f = torch.empty(4096)
                i = torch.empty(4096, dtype=torch.int64)
                seen[str(fill)] = {"float_all_nan": bool(torch.isnan(f).all()),
                                   "int_all_max": bool((i == torch.iinfo(torch.int64).max).all())}
            finally:
                torch.use_deterministic_algorithms(False)
    finally:
        module.fill_uninitialized_memory = default
    return {"fill_uninitialized_memory": {"default": default, "doc": doc, "empty": seen}}


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[1] == "list":
        import torch
        print(json.dumps([asdict(e) for e in parse(torch.use_deterministic_algorithms.__doc__)], indent=1))
        return 0
    if len(argv) == 3 and argv[1] == "run":
        print(json.dumps(run_entry(argv[2])))
        return 0
    if len(argv) >= 4 and argv[1] == "run" and argv[2].isdigit():
        # A child of run_all: the entries from the START-th on, each after
        # its start line (children.py).
        for index in range(int(argv[2]), len(argv) - 3):
            entry_id = argv[3 + index]
            print(json.dumps({"start": index, "id": entry_id}), flush=True)
            print(json.dumps(run_entry(entry_id)), flush=True)
        return 0
    if len(argv) == 2 and argv[1] == "all":
        print(json.dumps(run_all(sys.executable)))
        return 0
    print("usage: documented.py list | run ID | all", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
