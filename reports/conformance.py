"""The model held to PyTorch: the Conformance cases (suites/availability_test.cc)
ran each case through the harness's dispatch (the model) and through PyTorch.
This lists every case and every disagreement, in kernel class (PyTorch's
mkldnn convolution or its native kernels, its cuDNN path on a GPU), oneDNN's
kernel where oneDNN ran, cuDNN's engine or algorithm where cuDNN ran (PyTorch's
read from cuDNN's own API log), output bits and alerts, with both
sides' kernel and digest, and says why a disagreement stays where the reason
is known; an unexplained one is a model bug to fix. The disagreements are
grouped in classes (what differs, the two sides' kernel classes, and the
reason), unexplained classes first, so that a reader sees the few kinds of
disagreement before the rows of each."""

from __future__ import annotations

from typing import Any

from .evidence import Evidence

ASPECTS = (("same_kernel_class", "kernel class"), ("same_onednn_kernel", "oneDNN kernel"),
           ("same_cudnn_choice", "cuDNN engine or algorithm"), ("same_bits", "bits"), ("same_alert", "alert"))
# Aspects added after records were first written: a record without one
# agrees where both sides name the same (an older record names neither).
LATER = {"same_cudnn_choice": "cudnn_choice"}


# Where the model's cuDNN path is known, from reading PyTorch's Conv_v7.cpp
# and Conv_v8.cpp, to differ from PyTorch's and is not mended: each a named
# class, with what each side does and when it shows. The others found so
# far are mended in the model (selection/cudnn_policy.h: the LRU limit read
# as std::stoi reads it, the pinned default stored for a later benchmark
# call, time_sorted_plan's equal times and limit, getAlignment's 32 bytes).
GPU_PATH_DIFFERENCES = (
    {"name": "legacy benchmark: Find's list",
     "pytorch": "with TORCH_CUDNN_V8_API_DISABLED=1 and benchmark on, runs cudnnFind*AlgorithmEx's results in "
                "their order (successful ones, deterministic ones when asked), the first that runs winning",
     "model": "chooses among cudnnGetConvolution*Algorithm_v7's list, with the times cudnnFind gave looked up "
              "by algorithm",
     "shows": "where Find returns an algorithm Get_v7 does not list, or the reverse, or two share a time: "
              "another choice or another order after a failure"},
    {"name": "graph path: out of memory on a cached plan",
     "pytorch": "a cached plan that runs out of memory is dropped for this call and the search runs again "
                "(run_single_conv catches the out-of-memory)",
     "model": "reports the out-of-memory (a cached choice has nothing to try after it)",
     "shows": "only under memory pressure, on a problem seen before"},
    {"name": "graph path: the search workspace's bound",
     "pytorch": "leaves out the plans needing more than the caching allocator's largest cached block",
     "model": "leaves out those needing more than the device's free memory (cudaMemGetInfo)",
     "shows": "only when memory is fragmented or held by other processes"},
)


def _agrees(c: dict[str, Any], key: str) -> bool:
    if key not in c and key in LATER:
        return c["model"].get(LATER[key], "") == c["pytorch"].get(LATER[key], "")
    return bool(c.get(key))


def _not_compared(c: dict[str, Any], key: str) -> str:
    """Why an aspect could not be compared on this case ("" when it could):
    the model named cuDNN's choice, but PyTorch's side recorded none (its
    capture of cuDNN's API log named no engine or algorithm)."""
    if key == "same_cudnn_choice" and c["model"].get("cudnn_choice") and not c["pytorch"].get("cudnn_choice"):
        return ("PyTorch's cuDNN choice was not captured: cuDNN's API log of PyTorch's call named no engine or "
                "algorithm, so there is nothing to hold the model's to")
    return ""


def _why(aspect: str, model: dict[str, Any], pytorch: dict[str, Any], repro: str = "") -> str:
    """Why a known disagreement stays; "" for one that is not explained."""
    if (aspect in ("cuDNN engine or algorithm", "bits") and "cudnn.benchmark=true" in repro.split()
            and model.get("kernel_class") == pytorch.get("kernel_class") == "cudnn"):
        return ("benchmark mode: each side times the candidates itself and runs the fastest it measured; "
                "two searches need not agree where candidates' times are close")
    if (aspect in ("oneDNN kernel", "bits") and model.get("algorithm") == "auto"
            and str(model.get("onednn_kernel", "")).startswith("jit_wino")
            and not str(pytorch.get("onednn_kernel", "")).startswith("jit_wino")):
        return ("mended since these records: the model asked oneDNN for convolution_auto, for which oneDNN 2.x may "
                "take Winograd; PyTorch asks for convolution_direct in every direction, as the model now does")
    mv, pv = model.get("onednn_version", ""), pytorch.get("onednn_version", "")
    if (aspect in ("oneDNN kernel", "bits") and model.get("kernel_class") == pytorch.get("kernel_class") == "mkldnn"
            and mv and pv and mv != pv):
        return (f"different oneDNN versions: the model runs oneDNN {mv}, PyTorch its own {pv}; their kernels "
                "and bits are not expected to match")
    if aspect == "bits" and model.get("kernel_class") == pytorch.get("kernel_class") == "native":
        return ("stays: the model's native path is the harness's fp64 reference (one owner per output), "
                "PyTorch's is im2col and a fp32 GEMM on its BLAS; both are deterministic, their bits differ by design")
    return ""


def summarize(evidence: Evidence) -> dict[str, Any]:
    rows, disagreements = [], []
    for test, records in sorted(evidence.cases.items()):
        for r in records:
            c = r.get("conformance")
            if not isinstance(c, dict):
                continue
            row = {"test": test, "repro": r.get("repro", ""), "model": c["model"], "pytorch": c["pytorch"],
                   **{key: _agrees(c, key) for key, _ in ASPECTS},
                   "not_compared": {aspect: why for key, aspect in ASPECTS if (why := _not_compared(c, key))}}
            rows.append(row)
            for key, aspect in ASPECTS:
                if aspect in row["not_compared"]:
                    continue
                if not row[key]:
                    disagreements.append({"test": test, "repro": row["repro"], "aspect": aspect, "model": c["model"],
                                          "pytorch": c["pytorch"],
                                          "why": _why(aspect, c["model"], c["pytorch"], row["repro"])})
    agree = {aspect: sum(r[key] and aspect not in r["not_compared"] for r in rows) for key, aspect in ASPECTS}
    not_compared: dict[str, dict[str, Any]] = {}
    for r in rows:
        for aspect, why in r["not_compared"].items():
            not_compared.setdefault(aspect, {"why": why, "tests": []})["tests"].append(r["test"])
    classes: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for d in disagreements:  # what differs, between which kernels, and why: one class each
        key = (d["aspect"], str(d["model"].get("kernel_class", "")), str(d["pytorch"].get("kernel_class", "")), d["why"])
        classes.setdefault(key, {"aspect": key[0], "model_kernel_class": key[1], "pytorch_kernel_class": key[2],
                                 "why": key[3], "rows": []})["rows"].append(d)
    versions = {side: sorted({str(r[side].get("onednn_version", "")) for r in rows} - {""})
                for side in ("model", "pytorch")}
    # Unexplained classes first, then the largest.
    grouped = sorted(classes.values(), key=lambda c: (bool(c["why"]), -len(c["rows"]), c["aspect"]))
    return {"cases": len(rows), "agree": agree, "rows": rows, "disagreements": disagreements, "classes": grouped,
            "unexplained": sum(1 for d in disagreements if not d["why"]), "onednn_versions": versions,
            "not_compared": not_compared,
            "gpu_path_differences": list(GPU_PATH_DIFFERENCES)}
