// How `pe verify` judges a RoPE tensor (docs/verify.md, "RoPE tensors"):
// the tolerance of an inv_freq vector, and the diagnosis of a cos/sin table
// or inv_freq that fails, named in RoPE's own terms (layout, base, first
// position, scaling, attention factor, inv_freq precision) by comparing the
// RoPE identification (identify_rope.h) with the declared spec.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/identify/identify_rope.h"
#include "core/analysis/tolerance.h"
#include "core/schemes/registry.h"

namespace pe {

/// The limit for one inv_freq entry with exact value `v` > 0 under the
/// default rule: n·ulp_T(v) + u_C·|v|·(3 + |ln v|), the error of the usual
/// float32 computation 1.0 / (base ** (arange(0, dim, 2).float() / dim)):
/// the exponent 2i/dim rounded (u·|ln v| relative after pow), pow's own ulp
/// (2u) and the division's rounding (u). u_C and n as in tolerance.h.
/// An explicit tolerance (--atol/--rtol/--max-ulp) is used as given.
double InvFreqLimit(const Tolerance& tolerance, double v);

/// The one-sentence rule for the report header.
std::string InvFreqToleranceWhy(const Tolerance& tolerance);

/// The angle term's factor per column of a cos/sin table of `cols` columns
/// for `spec` under --semantics llama.cpp: the larger of the plain factor
/// 3 + 2|ln ω| and ggml's recipe's (GgmlAngleFactor: its recurrence costs
/// about 4 units per pair index), with `tolerance`'s sentence extended to
/// say so. Empty (and `tolerance` unchanged) under any other semantics.
std::vector<double> GgmlColumnFactors(const SchemeSpec& spec, std::int64_t cols, Tolerance* tolerance);

/// One line naming why the table differs from `declared` (a rope spec,
/// --hf-config applied), from `found` = IdentifyRope(table). `tensor` is
/// the declared tensor ("cos", "sin", "inv_freq").
/// The flag that names the scheme's tensor to compare a table with: a
/// table of one unnamed tensor (.npy, .csv: "pe") takes --tensor; a named
/// one (a container's "cos_cache") --reference-tensor.
inline std::string TensorFlagFor(const TableInfo& info) {
  return info.name.empty() || info.name == "pe" ? "--tensor" : "--reference-tensor";
}

/// `tensor_flag`: the flag that names the scheme's tensor for this file:
/// "--tensor" for a file of one unnamed tensor (.npy, .csv), whose --tensor
/// says which scheme tensor it is; "--reference-tensor" for a named tensor
/// (--tensor there selects another of the file's tensors).
std::string RopeDiagnosis(const RopeIdentification& found, const SchemeSpec& declared, const std::string& tensor,
                          const std::string& tensor_flag = "--tensor");

}  // namespace pe
