// Spec parameters by name: the CLI's scheme flags as key/value text, for
// the public API (include/pe/table.h, pe::Spec) and the Python module.
//
// One table maps each key (the flag without "--", '-' and '_' alike) to a
// SchemeSpec field with the flag's parsing rule, so a spec given as text
// builds the same SchemeSpec as the same flags on the command line. A new
// scheme parameter (a SchemeSpec field and a CLI flag) adds one line to
// the table in spec_params.cc; tests/core/api/api_test.cc checks that every
// flag the registry lists (`pe schemes`) has a key here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pe/table.h>

#include "core/spec/scheme.h"
#include "core/base/table.h"

namespace pe {

/// Every key, underscore spelling, in the CLI's order ("d_model", ...).
const std::vector<std::string>& SpecParamKeys();

/// The canonical key for `key` ("d-model" -> "d_model", "head_dim" ->
/// "d_model", "no_truncate" -> "no_truncate"), or empty when unknown.
std::string CanonicalSpecKey(std::string_view key);

/// True when canonical `key` is a switch (a boolean flag given alone on
/// the command line: no_truncate, cls_token, bidirectional, ...).
bool SpecParamIsSwitch(std::string_view key);

/// Sets field `key` of `spec` from `value` as the flag --key=value would.
/// Throws pe::Error (kUsage) naming "--key 'value'" for a value the flag
/// refuses (not an integer, beyond int64, not a number, not a boolean) and
/// for an unknown key (with a "did you mean"). Records the key in
/// spec.given; domains are checked later (CheckParamDomains), as for the CLI.
void SetSpecParam(SchemeSpec& spec, std::string_view key, std::string_view value);

/// Records canonical `key` in spec.given (the CLI's flags after parsing;
/// SetSpecParam does it for keys). Code that resets a given field to its
/// "not given" default (a rope-plan layer's scaling) erases its key.
void MarkSpecParamGiven(SchemeSpec& spec, std::string_view key);

/// The declared domain of a numeric parameter (the row of Params() in
/// spec_params.cc that also parses it): finite, in [lo, hi] with open ends
/// as marked, an integer when `integer`. `unset` (when has_unset) is the
/// field's "not given" default, accepted only when nobody gave it.
struct SpecParamDomain {
  std::string key;
  bool integer;
  double lo;
  bool lo_open;
  double hi;
  bool hi_open;
  bool has_unset;
  double unset;
  std::string rule;  ///< "must be a finite number above 0"
};

/// Every numeric parameter's domain, in Params() order.
std::vector<SpecParamDomain> SpecParamDomains();

/// The flag that names `key` in errors ("factor" -> "--factor"; d_model of
/// rope and xpos -> "--head-dim").
std::string SpecParamFlag(const SchemeSpec& spec, std::string_view key);

/// The one check of every numeric parameter against its declared domain:
/// a value outside it is refused, "--flag: VALUE: must be ..." (usage), or
/// naming the file and key it came from (spec.origin, input). A value equal
/// to the field's "not given" default is refused only when spec.given holds
/// its key. `before_files`: the spec before --hf-config / --gguf were read;
/// a value that differs from it is named as the file's.
/// Called by ValidateSpec (every scheme, every way in) and by RoPE after it
/// reads a model's config.
void CheckParamDomains(const SchemeSpec& spec, const SchemeSpec* before_files = nullptr);


}  // namespace pe
