#!/usr/bin/env bash
# `cmake --install BUILD --prefix SCRATCH/prefix` (BUILD: the folder of the
# pe under test) installs the expected tree, and what it installed works:
#  - bin/pe runs from the prefix; a man page for pe and for every subcommand
#    of `pe --help`, found by `man -w` through MANPATH; the bash, zsh and fish
#    completions; the docs; the public headers of the source's include/pe;
#  - libpe.a, and (when built) libpe.so with its versioned SONAME, every
#    NEEDED library found, and only pe:: symbols exported (no fmt:: ones);
#  - the CMake package (config, version, targets) and pe.pc, which pkg-config
#    reads with the prefix it was installed in (relocatable).
# Building and running programs against the prefix: scripts/package-smoke.sh.
# Usage: install_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"
build=$(dirname "$PE")
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
prefix=$PWD/prefix
cmake --install "$build" --prefix "$prefix" >install.log 2>&1 && ok || bad "cmake --install: $(tail -3 install.log)"

commands=$("$PE" --help | awk '/^Subcommands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
expected="bin/pe share/man/man1/pe.1 share/bash-completion/completions/pe share/zsh/site-functions/_pe
  share/fish/vendor_completions.d/pe.fish share/doc/pe/README.md share/doc/pe/cli.md share/doc/pe/install.md
  lib/libpe.a lib/cmake/pe/pe-config.cmake lib/cmake/pe/pe-config-version.cmake lib/cmake/pe/pe-static-targets.cmake
  lib/pkgconfig/pe.pc"
for c in $commands; do expected="$expected share/man/man1/pe-$c.1"; done
for f in $expected; do
  [ -f "$prefix/$f" ] && ok || bad "not installed: $f"
done
if [ -d "$source_dir/include/pe" ]; then
  for h in "$source_dir"/include/pe/*.h; do
    [ -f "$prefix/include/pe/$(basename "$h")" ] && ok || bad "public header not installed: include/pe/$(basename "$h")"
  done
fi
# Nothing of the source tree's internals: no internal headers, no tests.
[ -z "$(find "$prefix" -name '*_test*' -o -path '*/core/*.h')" ] && ok || bad "internal files installed: $(find "$prefix" -name '*_test*' -o -path '*/core/*.h' | head -3)"

"$prefix/bin/pe" generate --d-model 8 --max-len 4 -o t.npy && "$prefix/bin/pe" inspect t.npy >/dev/null && ok || bad "the installed pe does not run"
for page in pe $(for c in $commands; do echo "pe-$c"; done); do
  [ "$(MANPATH=$prefix/share/man man -w "$page" 2>&1)" = "$prefix/share/man/man1/$page.1" ] && ok || bad "man -w $page: $(MANPATH=$prefix/share/man man -w "$page" 2>&1)"
done
cmp -s "$prefix/share/bash-completion/completions/pe" <("$PE" completion bash) && ok || bad "the installed bash completion is not pe completion bash"

# The shared library (not in the sanitizer build: -DPE_BUILD_SHARED=OFF).
so=$(ls "$prefix"/lib/libpe.so.*.*.* 2>/dev/null | head -1)
if [ -f "$build/libpe.so" ] || [ -n "$so" ]; then
  [ -n "$so" ] && [ -L "$prefix/lib/libpe.so" ] && ok || bad "libpe.so.X.Y.Z and the libpe.so link not installed"
  soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
  [[ "$soname" =~ ^libpe\.so\.[0-9]+\.[0-9]+$ ]] && [ -e "$prefix/lib/$soname" ] && ok || bad "SONAME '$soname'"
  ldd "$so" | grep -q "not found" && bad "libpe.so: $(ldd "$so" | grep 'not found')" || ok
  exported=$(nm -D --defined-only -C "$so" | awk '{$1=""; $2=""; print substr($0, 3)}')
  [ -n "$(echo "$exported" | grep '^pe::')" ] && ok || bad "libpe.so exports no pe:: symbol"
  others=$(echo "$exported" | grep -vE '^(pe::|typeinfo for pe::|typeinfo name for pe::|vtable for pe::|VTT for pe::|(non-)?virtual thunk to pe::)' | head -5)
  [ -z "$others" ] && ok || bad "libpe.so exports more than pe:: — $others"
fi

# pkg-config reads the installed pe.pc, with this prefix.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs pe >pc.txt 2>&1 && ok || bad "pkg-config pe: $(cat pc.txt)"
grep -q -- "-I$prefix/lib/pkgconfig/../../include" pc.txt || grep -q -- "-I$prefix/include" pc.txt && ok || bad "pe.pc Cflags do not point into the prefix: $(cat pc.txt)"
grep -q -- "-lpe" pc.txt && ok || bad "pe.pc Libs lack -lpe: $(cat pc.txt)"
# pe-static.pc names the archive itself, never -lpe (which would find libpe.so).
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs pe-static >pcs.txt 2>&1 && ok || bad "pkg-config pe-static: $(cat pcs.txt)"
grep -q -- "/libpe.a" pcs.txt && ! grep -qw -- "-lpe" pcs.txt && ok || bad "pe-static.pc Libs: $(cat pcs.txt)"
[ "$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion pe)" = "$("$PE" --version | awk '{print $2}')" ] && ok || bad "pe.pc version is not pe --version's"

finish install_test
