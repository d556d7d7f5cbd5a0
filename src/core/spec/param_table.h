// The scheme parameters, one row each: key, flag, SchemeSpec field, type,
// domain, whether help shows the default, help text, and the schemes that
// take it (with what `pe schemes NAME` says of it there). Everything that
// names a parameter is generated from this table (param_table.cc):
//  - the CLI's flags (src/cli/scheme_flags.cc, AddSpecFlags),
//  - the keys of inline specs, pe::Spec and the Python module, with their
//    parsing rules and "did you mean" (core/spec/params.h),
//  - the domain check of every numeric value (CheckParamDomains),
//  - which scheme takes which flag (CheckFlagsApply, core/schemes/inline_spec.h),
//  - each scheme's parameter listing (SchemeInfo::params: `pe schemes`,
//    help defaults, pe::ListSchemes),
//  - reading a table's metadata back into a spec (BuildReferenceSpec, and
//    `pe verify` through the CLI's flags).
// Adding a parameter is a SchemeSpec field and one row here.
#pragma once

#include <cmath>
#include <string_view>
#include <variant>
#include <vector>

#include "core/spec/scheme.h"

namespace pe {

enum class ParamType {
  kInt,        ///< std::int64_t field
  kUnsigned,   ///< std::uint64_t field
  kReal,       ///< double field
  kText,       ///< std::string field, as given
  kSwitch,     ///< bool field set by the flag alone (or key=true/false)
  kNegSwitch,  ///< bool field the flag clears (--no-truncate)
  kDType,      ///< DType field, by name
  kGrid,       ///< "HxW" or "N": grid_h and grid_w
};

/// The values a numeric parameter may take: finite, between lo and hi
/// (each end open or closed), whole for an integer. `unset` is the field's
/// "not given" value (-1, 0): left alone when nobody gave it, refused like
/// any other value when given.
struct ParamDomain {
  double lo = -HUGE_VAL, hi = HUGE_VAL;
  bool lo_open = false, hi_open = false;
  bool has_unset = false;
  double unset = 0;
  constexpr ParamDomain Unset(double v) const {
    ParamDomain d = *this;
    d.has_unset = true;
    d.unset = v;
    return d;
  }
};
constexpr ParamDomain Any() { return {}; }
constexpr ParamDomain Above(double lo) { return {lo, HUGE_VAL, true, false}; }
constexpr ParamDomain AtLeast(double lo) { return {lo, HUGE_VAL, false, false}; }
constexpr ParamDomain In(double lo, double hi, bool lo_open) { return {lo, hi, lo_open, false}; }

/// Whether help and man pages show the field's default (its value in a
/// default-constructed SchemeSpec: the one place of the value).
enum ParamDefault { kHidden, kShown };

/// A scheme that takes the parameter, and the line of `pe schemes NAME`
/// that lists it. Lines are ordered by `line`; parameters that share a
/// line ("--beta-fast / --beta-slow") give its number and their `part`
/// (1, 2, ...) after the first, which holds the text.
struct ParamUse {
  ParamUse(std::string_view scheme_name, int line_no, std::string_view what, std::string_view default_text,
           std::string_view also_shown = {})
      : scheme(scheme_name), line(line_no), meaning(what), fallback(default_text), shown_as(also_shown) {}
  ParamUse(std::string_view scheme_name, int line_no, int part_no) : scheme(scheme_name), line(line_no), part(part_no) {}

  std::string_view scheme;
  int line = 0;
  int part = 0;
  std::string_view meaning;   ///< what it is for this scheme
  std::string_view fallback;  ///< its default there ("10000", "required", "-")
  std::string_view shown_as;  ///< another of the row's flags to list ("--head-dim")
};

using ParamMember = std::variant<std::monostate, std::int64_t SchemeSpec::*, std::uint64_t SchemeSpec::*,
                                 double SchemeSpec::*, std::string SchemeSpec::*, bool SchemeSpec::*,
                                 DType SchemeSpec::*>;

struct ParamRow {
  std::string_view key;       ///< "beta_fast": inline specs, pe::Spec, metadata
  std::string_view flag;      ///< "--beta-fast"; CLI11 names, aliases after a comma; empty for an alias key
  ParamMember member;         ///< the SchemeSpec field (none for kGrid)
  ParamType type;
  ParamDomain domain;         ///< for kInt and kReal
  ParamDefault show_default;
  std::string_view metavar;   ///< "B" in "--beta-fast B"
  std::string_view help;      ///< the flag's help
  std::vector<ParamUse> schemes;
  std::string_view alias_of = {};  ///< another row's key this one spells (rope_theta: base)

  /// Numeric rows have a domain: kInt and kReal that are not aliases.
  bool numeric() const { return alias_of.empty() && (type == ParamType::kInt || type == ParamType::kReal); }
  /// The first long name: "--base" of "--base,--rope-theta".
  std::string_view main_flag() const { return flag.substr(0, flag.find(',')); }
};

/// Every parameter, in the CLI's order (the common flags first).
const std::vector<ParamRow>& ParamTable();

/// The row of `key` (canonical, underscore spelling), or nullptr.
const ParamRow* FindParamRow(std::string_view key);

/// The row whose flag names include `flag` ("--head-dim": d_model), or nullptr.
const ParamRow* FindParamRowByFlag(std::string_view flag);

/// The listing of scheme `scheme` for `pe schemes`, from the rows' uses.
std::vector<SchemeParam> SchemeListing(std::string_view scheme);

/// The numeric value of a numeric row's field in `spec`.
double ParamNumber(const ParamRow& row, const SchemeSpec& spec);

}  // namespace pe
