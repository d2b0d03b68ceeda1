// oneDNN's verbose lines, read in both of its formats: oneDNN 2.x prints
//   onednn_verbose,exec,cpu,convolution,jit:avx2,backward_weights,...
// (dnnl_verbose in older releases, a timestamp after the marker when asked),
// oneDNN 3.x prints
//   onednn_verbose,v1,primitive,exec,cpu,convolution,brg_conv_fwd:avx2,...
// (with a timestamp before "primitive" when asked). Only the primitives a
// run executed count, reorders aside.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bc {

struct OnednnExec {
  std::string engine;     // cpu
  std::string primitive;  // convolution, matmul, reorder, ...
  std::string impl;       // jit:avx2, brg_conv_fwd:avx512_core, gemm:jit, ...
};

// The executed primitive a verbose line names, or nothing for any other line
// (info, create, a line of some other program).
std::optional<OnednnExec> ParseOnednnVerboseLine(std::string_view line);

// "primitive impl" of every executed primitive but reorders in `text`
// (oneDNN's verbose output of one run), sorted, unique, ", "-separated.
std::string OnednnKernelsIn(std::string_view text);

}  // namespace bc
