// The oneDNN engine (what torch.backends.mkldnn switches), through oneDNN's
// C++ API. Tensors are handed over in PyTorch's plain layouts; reorders to and
// from the primitive's layouts happen in Prepare and Fetch, outside the timed
// Execute. implementation() is oneDNN's own name for the kernel it picked
// (impl_info_str, e.g. "jit:avx512_core"), which depends on the ISA
// (ONEDNN_MAX_CPU_ISA caps it).
//
// Candidates, in heuristic order; a candidate oneDNN cannot build for a
// problem is not listed:
//   conv2d: "direct" (direct algorithm on the blocked layouts oneDNN
//           prefers: what PyTorch's mkldnn convolution asks oneDNN for, in
//           every direction), "auto" (convolution_auto: oneDNN decides, and
//           may take Winograd), "gemm" (direct algorithm forced onto plain
//           NCHW/OIHW, which oneDNN runs as im2col + GEMM), "winograd"
//           (where oneDNN implements it).
//   matmul: "auto".
// The workspace of a candidate is its scratchpad. oneDNN documents its
// primitives as run-to-run deterministic for a fixed environment (threads,
// ISA, library version), so every candidate is deterministic; results may
// still differ between thread counts and ISAs, which the cross-process probes
// measure.
#pragma once

#include "backends/engine.h"
