// pe/export.h: PE_API marks what libpe.so exports. The library is compiled
// with -fvisibility=hidden, so a function or class of include/pe without
// PE_API is not in libpe.so: a program linking libpe.so fails to link
// (scripts/check-exports.py, the `exports` test, finds it first). Harmless
// for the static libpe.a.
#pragma once

#define PE_API __attribute__((visibility("default")))
