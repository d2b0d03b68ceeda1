"""Conv2d problem strings, canonicalised exactly as harness/problem.cc does.

The C++ fixtures re-parse every generated repro and fail when the result is
not byte-identical, so a drift between the two implementations is caught.
"""

from __future__ import annotations

import re

FIELDS = ("mb", "ic", "ih", "iw", "oc", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw", "g")
REQUIRED = ("mb", "ic", "ih", "oc", "kh")
SQUARE = {"iw": "ih", "kw": "kh", "sw": "sh", "pw": "ph", "dw": "dh"}
DEFAULTS = {"sh": 1, "ph": 0, "dh": 1, "g": 1}
DIRECTIONS = ("fwd", "bwd_data", "bwd_weights")
OPS = ("conv2d", "matmul", "scatter_add")
_SIMPLE_FIELDS = {"matmul": ("m", "n", "k"), "scatter_add": ("n", "d")}
DTYPES = ("f32", "f16")
LAYOUTS = ("nchw", "nhwc")
MAX_TENSOR_ELEMS = 1 << 32
MAX_DIM = 2**31 - 1
_TOKEN = re.compile(r"([a-z]+)(\d+)")


def split_op(shape: str) -> tuple[str, str]:
    """``matmul:m8n8k8`` -> (``matmul``, ``m8n8k8``); a bare shape is conv2d."""
    op, sep, rest = shape.partition(":")
    if not sep:
        return "conv2d", shape
    if op not in OPS:
        raise ValueError(f"unknown operation '{op}' in shape '{shape}' (known: {', '.join(OPS)})")
    return op, rest


def parse_any_shape(shape: str) -> tuple[str, dict[str, int]]:
    """The operation and fields of a [shapes] entry; ValueError if bad."""
    op, rest = split_op(shape)
    if op == "conv2d":
        return op, parse_shape(rest)
    fields = _SIMPLE_FIELDS[op]
    values: dict[str, int] = {}
    pos = 0
    while pos < len(rest):
        m = _TOKEN.match(rest, pos)
        if not m or m.group(1) not in fields:
            raise ValueError(f"cannot read {op} shape '{rest}' (fields: {', '.join(fields)})")
        if m.group(1) in values:
            raise ValueError(f"field '{m.group(1)}' given twice in shape '{shape}'")
        values[m.group(1)] = int(m.group(2))
        pos = m.end()
    for key in fields:
        if key not in values:
            raise ValueError(f"shape '{shape}' is missing '{key}'")
        if not 1 <= values[key] <= MAX_DIM:
            raise ValueError(f"'{key}' must be in 1..{MAX_DIM} in shape '{shape}'")
    dims = ((values["m"], values["k"]), (values["k"], values["n"]), (values["m"], values["n"])) if op == "matmul" \
        else ((values["n"],), (values["d"],))
    for d in dims:
        n = 1
        for x in d:
            n *= x
        if n > MAX_TENSOR_ELEMS:
            raise ValueError(f"a tensor of shape '{shape}' would exceed {MAX_TENSOR_ELEMS} elements")
    return op, values


def format_any(op: str, direction: str, dtype: str, values: dict[str, int], layout: str = "nchw") -> str:
    """The canonical problem string of harness/problem.cc."""
    if op == "conv2d":
        return format_problem(direction, dtype, values, layout)
    return f"{op}:{dtype}:" + "".join(f"{k}{values[k]}" for k in _SIMPLE_FIELDS[op])


def parse_shape(shape: str) -> dict[str, int]:
    """Fields of a conv2d shape string such as ``mb8ic64ih56oc64kh3ph1``; ValueError if bad."""
    values: dict[str, int] = {}
    pos = 0
    while pos < len(shape):
        m = _TOKEN.match(shape, pos)
        if not m:
            raise ValueError(f"cannot read shape '{shape}' at '{shape[pos:]}'")
        key, num = m.group(1), int(m.group(2))
        if key not in FIELDS:
            raise ValueError(f"unknown field '{key}' in shape '{shape}'")
        if key in values:
            raise ValueError(f"field '{key}' given twice in shape '{shape}'")
        values[key] = num
        pos = m.end()
    for key in REQUIRED:
        if key not in values:
            raise ValueError(f"shape '{shape}' is missing '{key}'")
    for key, source in SQUARE.items():
        values.setdefault(key, values.get(source, DEFAULTS.get(source, 0)))
    for key, default in DEFAULTS.items():
        values.setdefault(key, default)
    _validate(shape, values)
    return values


def output_size(v: dict[str, int]) -> tuple[int, int]:
    oh = (v["ih"] + 2 * v["ph"] - v["dh"] * (v["kh"] - 1) - 1) // v["sh"] + 1
    ow = (v["iw"] + 2 * v["pw"] - v["dw"] * (v["kw"] - 1) - 1) // v["sw"] + 1
    return oh, ow


def tensor_bytes_of(op: str, v: dict[str, int]) -> int:
    """Bytes of every f32 buffer of a problem (indices count as 4 bytes)."""
    if op == "matmul":
        return 4 * (v["m"] * v["k"] + v["k"] * v["n"] + v["m"] * v["n"])
    if op == "scatter_add":
        return 4 * (2 * v["n"] + v["d"])
    return tensor_bytes(v)


def tensor_bytes(v: dict[str, int]) -> int:
    """Bytes of src, weights and dst in f32."""
    oh, ow = output_size(v)
    elems = (v["mb"] * v["ic"] * v["ih"] * v["iw"] + v["oc"] * (v["ic"] // v["g"]) * v["kh"] * v["kw"]
             + v["mb"] * v["oc"] * oh * ow)
    return 4 * elems


def _validate(shape: str, v: dict[str, int]) -> None:
    for key in FIELDS:
        low = 0 if key in ("ph", "pw") else 1
        if v[key] < low:
            raise ValueError(f"'{key}' must be {'non-negative' if low == 0 else 'positive'} in shape '{shape}'")
        if v[key] > MAX_DIM:
            raise ValueError(f"'{key}' is too large in shape '{shape}'")
    if v["ic"] % v["g"] or v["oc"] % v["g"]:
        raise ValueError(f"groups g{v['g']} must divide ic{v['ic']} and oc{v['oc']} in shape '{shape}'")
    oh, ow = output_size(v)
    if oh < 1 or ow < 1:
        raise ValueError(f"kernel does not fit the padded input in shape '{shape}'")
    for dims in ((v["mb"], v["ic"], v["ih"], v["iw"]), (v["oc"], v["ic"] // v["g"], v["kh"], v["kw"]),
                 (v["mb"], v["oc"], oh, ow)):
        n = 1
        for d in dims:
            n *= d
        if n > MAX_TENSOR_ELEMS:
            raise ValueError(f"a tensor of shape '{shape}' would exceed {MAX_TENSOR_ELEMS} elements")


def format_problem(direction: str, dtype: str, values: dict[str, int], layout: str = "nchw") -> str:
    middle = "" if layout == "nchw" else f"{layout}:"
    return f"conv2d:{direction}:{dtype}:{middle}" + "".join(f"{k}{values[k]}" for k in FIELDS)
