// A probe's verdict as the VerifyReport every verify's JUnit writer takes
// (core/report/verify_text.h). Internal to src/core/api/.
#pragma once

#include <pe/probe.h>

#include "core/analysis/verify/verify.h"

namespace pe {

VerifyReport ProbeVerifyReport(const ProbeVerifyResult& r);

}  // namespace pe
