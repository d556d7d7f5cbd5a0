// The implementation side of the public API's pimpl classes (include/pe/):
// what a pe::Table and a pe::RowStream hold. Internal: only src/core/api/
// includes it.
#pragma once

#include <memory>
#include <vector>

#include <pe/analysis.h>
#include <pe/table.h>

#include "core/base/table.h"
#include "core/base/table_set.h"
#include "core/analysis/verify/verify.h"

namespace pe {

struct RowStream::Impl {
  RowSource* source = nullptr;  ///< owned by the Table's set
  TensorInfo info;
};

struct Table::Impl {
  TableSet set;
  MetaList meta;
  std::vector<RowStream> streams;  ///< one per set.tensors entry, same order
};

/// The pimpls' insides, for the library alone: impl() is private, so a
/// client of include/pe cannot reach a core type through it.
struct ImplAccess {
  static RowStream::Impl& Of(const RowStream& stream) { return stream.impl(); }
  static Table::Impl& Of(const Table& table) { return table.impl(); }
};

struct VerifyResult::Details {
  VerifyReport report;
};

/// The public description of a core table.
TensorInfo ToTensorInfo(const TableInfo& info);
MetaList ToMetaList(const Metadata& meta);
Metadata ToMetadata(const MetaList& meta);

struct TableIdentification;  // core/analysis/identify/identify_table.h
/// The public form of an identification (IdentifyTable, InspectFile).
IdentifyResult ToIdentifyResult(const TableIdentification& id);
/// The public result of a core verify report (its fields, JSON and details).
VerifyResult VerifyResultOf(const VerifyReport& report);

/// A Table over `set` (takes it).
Table MakeTable(TableSet set);

}  // namespace pe
