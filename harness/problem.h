// Problems: what one operation computes, described completely and
// canonically. Each operation is declared once, in harness/ops/NAME.h (see
// harness/op.h); this file holds what is generic over them. A problem's
// repro string is its identity:
//   NAME[:DIRECTION]:DTYPE[:LAYOUT]:SHAPE
// the direction only for operations that have several, the layout only when
// it is not nchw, and the shape every field in the operation's order.
// FormatProblem() writes it, ParseProblem() reads it back (also with optional
// fields left out, filling their defaults), and
// ParseProblem(FormatProblem(p)) == p for every valid p.
//   conv2d:fwd:f32:mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1
//   matmul:f32:m128n256k64
//   scatter_add:f32:n100000d1000
// ProblemFromShape() reads the specs' shorter form (a shape, "op:shape" or a
// bare conv2d shape, and the direction, dtype and layout apart): the
// generator and the benchmarks ask it (tools/bc_problem.cc) rather than
// write repro strings themselves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "harness/status.h"
#include "ops_list.h"  // generated from harness/ops/*.h: BC_OP_TYPES

namespace bc {

using Problem = std::variant<BC_OP_TYPES>;

std::string FormatProblem(const Problem& p);
// Shape part only: "mb8ic64ih56iw56oc64kh3kw3sh1sw1ph1pw1dh1dw1g1".
std::string FormatShape(const Problem& p);
const char* OpName(const Problem& p);  // "conv2d", "matmul", "scatter_add"
// Every declared operation's name, in the variant's order.
std::vector<std::string_view> OpNames();
Direction ProblemDirection(const Problem& p);  // kForward for operations without directions
DataType ProblemDataType(const Problem& p);
Layout ProblemLayout(const Problem& p);  // kNchw for operations without layouts
// True for the plain case every engine implements: f32, NCHW.
bool IsPlainF32(const Problem& p);
double ProblemGflop(const Problem& p);
int64_t AccumulationLength(const Problem& p);
// The error model's k: the most terms one output element sums.
int64_t BoundLength(const Problem& p);
std::vector<TensorDecl> TensorsOf(const Problem& p);
// The roles whose products each output element sums (the second empty: it sums values).
std::array<std::string_view, 2> OperandsOf(const Problem& p);
std::string OutputRole(const Problem& p);
// The fp64 oracle run on `b` (racy: the atomic positive control).
void RunReference(const Problem& p, Buffers& b, bool racy);
Status ValidateProblem(const Problem& p);

Result<Problem> ParseProblem(std::string_view repro);
// `shape` as a spec writes it: "mb8ic64ih56oc64kh3ph1" (conv2d) or "matmul:m8n8k8".
Result<Problem> ProblemFromShape(std::string_view shape, std::string_view direction = "fwd",
                                 std::string_view dtype = "f32", std::string_view layout = "nchw");

// One operation, parsed as itself ("conv2d:fwd:f32:mb1ic1ih1oc1kh1").
template <typename P>
Result<P> ParseAs(std::string_view repro) {
  Result<Problem> p = ParseProblem(repro);
  if (!p.ok()) return p.status();
  if (const P* q = std::get_if<P>(&p.value())) return *q;
  return Status(StatusCode::kInvalidArgument,
                "problem '" + std::string(repro) + "': expected " + std::string(P::kName));
}

}  // namespace bc
