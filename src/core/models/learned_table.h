// A learned position table read whole from a table file or a model folder
// (pe::ReadLearnedTable, include/pe/resize.h): the table a resize rule is
// applied to, with the config values the rules read.
#pragma once

#include <string>

#include <pe/resize.h>

namespace pe {

/// See pe::ReadLearnedTable.
LearnedTable ReadLearnedTableFrom(const std::string& src, const std::string& what);

}  // namespace pe
