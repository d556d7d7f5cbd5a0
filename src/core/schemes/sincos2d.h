// MAE / timm 2-D sin-cos for vision grids (sincos2d.cc): the registry entry.
// Formulas, sources and layouts: docs/schemes.md.
#pragma once

#include "core/schemes/registry.h"

namespace pe {

SchemeInfo SinCos2dSchemeInfo();

}  // namespace pe
