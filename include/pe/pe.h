// pe/pe.h: the whole public API of the pe library (docs/library.md).
//
//   pe/error.h     pe::Error {kind, message}
//   pe/types.h     DType, metadata, TensorInfo
//   pe/table.h     Spec -> Table (generate), files -> Table (read), write; row blocks
//   pe/analysis.h  identify, verify (report as data), dot curves
//   pe/inspect.h   what a table file holds (stats, identification), as pe inspect shows it
//   pe/view.h      the views of `pe dot --view` as data, CSV/JSON, pictures
//   pe/dot.h       `pe dot` as one request: curves, heatmaps, views, their files
//   pe/probe.h     rotation probes: what an engine applies, checked against a plan
//   pe/engine.h    an engine's rope run live (llama.cpp's ggml by dlopen), its probe verified
//   pe/model.h     model artifacts: their plan, tensors and checks (inspect/verify MODEL)
//
// Link: find_package(pe CONFIG REQUIRED) + target_link_libraries(x pe::pe).
#pragma once

#include <pe/export.h>

#include <pe/analysis.h>
#include <pe/dot.h>
#include <pe/engine.h>
#include <pe/error.h>
#include <pe/inspect.h>
#include <pe/model.h>
#include <pe/output.h>
#include <pe/probe.h>
#include <pe/resize.h>
#include <pe/runtime.h>
#include <pe/table.h>
#include <pe/text.h>
#include <pe/types.h>
#include <pe/view.h>

#include <string_view>

namespace pe {

/// The library's version, "MAJOR.MINOR.PATCH" (as `pe --version`).
PE_API std::string_view Version();

}  // namespace pe
