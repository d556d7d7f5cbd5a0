// `pe verify --model A [--model B]` as data: the checks of model artifacts
// (core/models/artifact.h), each one pe::Check with a measured value, a limit
// and a verdict, gathered in a VerifyReport (core/analysis/verify/verify.h) so that the
// text, JSON and JUnit reports of `pe verify FILE` serve it unchanged.
// Each check is described in docs/models.md.
//
//   tensors   each stored positional tensor of an artifact against the exact
//             table of its own plan: inv_freq as frequencies (rope_verify.h)
//             and in float32 or wider, cos/sin caches, a sinusoidal
//             embed_positions (with the row offset named when it is off), a
//             learned position embedding identified by its shape (trained
//             weights have no formula), rope_freqs / rope_factors against
//             the llama3 formula / longrope lists of the plan
//   plans     one artifact's plan against another's, group by group: rope
//             theta, rotary dim, layout (a GGUF's rope type against the
//             architecture's), scaling type and every parameter, context
//             length, NoPE layers; each check named with both sources
//             ("rope_theta: a/config.json rope_theta = 500000, model.gguf
//             llama.rope.freq_base = 10000"), and the rope_freqs tensor of
//             one against the llama3 formula of the other's config
#pragma once

#include <string>
#include <vector>

#include "core/analysis/check.h"
#include "core/models/artifact.h"
#include "core/analysis/verify/verify.h"

namespace pe {

/// The checks of `a`'s stored positional tensors against its own plan, or,
/// for its RoPE tensors (inv_freq, cos/sin caches) when it states none (an
/// ONNX export, a bare checkpoint), against `plan_of`'s (another artifact
/// of the same model: `pe verify --model DIR --model model.onnx`); each such
/// check names the artifact whose plan it used. Throws pe::Error (input)
/// when a tensor cannot be read.
std::vector<Check> CheckArtifactTensors(const ModelArtifact& a, bool diagnose = true,
                                        const ModelArtifact* plan_of = nullptr);

/// The checks of `b`'s plan (and rope_freqs / rope_factors tensors) against
/// `a`'s. Values both state are compared exactly, or to 2^-23 relative for
/// reals (a GGUF stores them as float32).
std::vector<Check> ComparePlans(const ModelArtifact& a, const ModelArtifact& b);

/// Every check of `artifacts` (each one's tensors — against its own plan,
/// or the first other artifact's where it states none — then each later
/// one's plan against the first's) as one report: file = the paths joined by
/// " + ", reference_kind "model", notes = the readers' notes. Checks that
/// compared nothing (no tensor stored, no plan to compare) fail the report
/// unless `allow_empty` (SettleVerdict, core/analysis/verify/verify.h).
VerifyReport VerifyModelArtifacts(const std::vector<const ModelArtifact*>& artifacts, bool diagnose = true,
                                  bool allow_empty = false);

/// "a/config.json rope_theta" or "model.gguf llama.rope.freq_base": where
/// `a` states setting `name` (of plan group `group`), with its file.
std::string SettingSource(const ModelArtifact& a, const std::string& name, const std::string& group = "");

}  // namespace pe
