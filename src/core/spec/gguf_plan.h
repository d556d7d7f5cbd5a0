// The positional-encoding plan of a GGUF model, read as llama.cpp reads it
// (src/llama-model.cpp load_hparams and the graph builders, commit in
// docs/gguf.md). ReadGgufArtifact (gguf_artifact.cc) fills a ModelArtifact
// with it; these two entry points give it to `pe generate --gguf`:
//
//   rope       WithGguf: the spec of the full-attention layers (the plan's
//              "full_attention" group, else its first group)
//   rope-plan  PlanFromGguf: the whole per-layer plan
//
// As with --hf-config, the GGUF's values override the corresponding flags;
// the flags kept are --max-len, --start, --dtype and --layout (when given,
// it replaces the layout of the rope type).
#pragma once

#include "core/spec/pe_plan.h"
#include "core/spec/scheme.h"

namespace pe {

/// The plan of the GGUF file spec.gguf with spec's dtype, start, max_len
/// (and layout when set). Throws pe::Error (input) naming the file when it
/// is malformed or states no RoPE plan (an architecture without RoPE, an
/// unknown architecture without --layout, a scaling type pe cannot follow).
PePlan PlanFromGguf(const SchemeSpec& spec);

/// `spec` with the full-attention layers' RoPE of spec.gguf applied (spec
/// itself when spec.gguf is empty); spec.gguf is kept, for provenance.
SchemeSpec WithGguf(const SchemeSpec& spec);

}  // namespace pe
