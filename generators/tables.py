"""Built-in layer tables: the problems of well-known models, so a spec can
say `resnet = { table = "resnet50", mb = 8 }` instead of listing layers.

resnet50: the 20 distinct convolutions of torchvision's ResNet-50 (v1.5,
stride on the 3x3) at 224x224 input. bert_base: the matmuls of one BERT-base
encoder layer for `tokens` rows (batch x sequence), and the per-head
attention products at sequence 128.
"""

from __future__ import annotations

# name -> (ic, ih, oc, kh, sh, ph)
RESNET50: dict[str, tuple[int, int, int, int, int, int]] = {
    "conv1": (3, 224, 64, 7, 2, 3),
    "l1_reduce": (64, 56, 64, 1, 1, 0),
    "l1_3x3": (64, 56, 64, 3, 1, 1),
    "l1_expand": (64, 56, 256, 1, 1, 0),
    "l1_in": (256, 56, 64, 1, 1, 0),
    "l2_reduce": (256, 56, 128, 1, 1, 0),
    "l2_3x3_s2": (128, 56, 128, 3, 2, 1),
    "l2_expand": (128, 28, 512, 1, 1, 0),
    "l2_down": (256, 56, 512, 1, 2, 0),
    "l2_in": (512, 28, 128, 1, 1, 0),
    "l2_3x3": (128, 28, 128, 3, 1, 1),
    "l3_reduce": (512, 28, 256, 1, 1, 0),
    "l3_3x3_s2": (256, 28, 256, 3, 2, 1),
    "l3_expand": (256, 14, 1024, 1, 1, 0),
    "l3_down": (512, 28, 1024, 1, 2, 0),
    "l3_in": (1024, 14, 256, 1, 1, 0),
    "l3_3x3": (256, 14, 256, 3, 1, 1),
    "l4_reduce": (1024, 14, 512, 1, 1, 0),
    "l4_3x3_s2": (512, 14, 512, 3, 2, 1),
    "l4_expand": (512, 7, 2048, 1, 1, 0),
}

# name -> (m, n, k); "T" stands for the table's `tokens`.
BERT_BASE: dict[str, tuple[str | int, int, int]] = {
    "qkv": ("T", 2304, 768),
    "attn_out": ("T", 768, 768),
    "ffn_up": ("T", 3072, 768),
    "ffn_down": ("T", 768, 3072),
    "scores": (128, 128, 64),
    "context": (128, 64, 128),
}

TABLES = {"resnet50": ("mb", 32), "bert_base": ("tokens", 1024)}


def table_shapes(table: str, size: int) -> dict[str, str]:
    """Layer name -> shape string of the spec language."""
    if table == "resnet50":
        return {name: f"mb{size}ic{ic}ih{ih}oc{oc}kh{kh}sh{sh}ph{ph}"
                for name, (ic, ih, oc, kh, sh, ph) in RESNET50.items()}
    if table == "bert_base":
        return {name: f"matmul:m{size if m == 'T' else m}n{n}k{k}" for name, (m, n, k) in BERT_BASE.items()}
    raise KeyError(table)
