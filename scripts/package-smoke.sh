#!/usr/bin/env bash
# Install and package smoke test (CI, .ci/run step 2), on an existing build:
#  1. `cmake --install BUILD --prefix PREFIX` (no root): the installed pe runs,
#     its man page and completions are in place, and a program using the
#     library builds against the prefix with find_package(pe CONFIG) and with
#     pkg-config, and runs;
#     With the Python module built (PE_BUILD_PYTHON=ON), python3 imports it
#     from the prefix (PYTHONPATH as cmake --install says), and the wheel of
#     pyproject.toml (python3 -m build --no-isolation, this build folder)
#     installs into a fresh venv --system-site-packages and imports;
#  2. (as root, with dpkg) `cpack -G DEB`: three packages, pe (the command;
#     Depends: runtime libraries only, no -dev package), libpe-dev (headers,
#     libraries, CMake and pkg-config files) and python3-pe (Depends: python3,
#     python3-numpy); `dpkg -i` of the three, then pe generate, man -w pe, a
#     bash completion, the same two consumer builds against /usr, python3 -c
#     'import pe', `dpkg -r` of the three.
# The consumer is examples/ once it exists (examples/CMakeLists.txt uses
# find_package(pe CONFIG) and pe::pe), else a throw-away program that only
# links pe::pe. Skip step 2 with PE_SMOKE_DEB=0.
# Usage: scripts/package-smoke.sh [BUILD_DIR] [SCRATCH_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
scratch=${2:-/tmp/pe-package-smoke}
rm -rf "$scratch" && mkdir -p "$scratch"
jobs=${PE_JOBS:-2}
say() { printf '\n--- %s\n' "$*"; }
fail() { echo "package-smoke: FAIL: $*" >&2; exit 1; }

cmake --build "$build" -j"$jobs"  # the man pages, completions and libpe.so beside pe

# The consumer program's source folder.
consumer_source() {
  if [ -f "$root/examples/CMakeLists.txt" ]; then
    echo "$root/examples"
    return
  fi
  local d=$scratch/consumer
  mkdir -p "$d"
  cat >"$d/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(pe_consumer CXX)
find_package(pe CONFIG REQUIRED COMPONENTS static)
add_executable(consumer consumer.cc)
target_link_libraries(consumer PRIVATE pe::pe)
add_executable(consumer_static consumer.cc)
target_link_libraries(consumer_static PRIVATE pe::pe_static)
EOF
  cat >"$d/consumer.cc" <<'EOF'
// Links libpe and calls nothing: the public API (include/pe) is not here yet.
int main() { return 0; }
EOF
  echo "$d"
}

# consumer_builds PREFIX: the consumer with find_package (CMAKE_PREFIX_PATH)
# and, for the throw-away program, with pkg-config; runs them.
consumer_builds() {
  local prefix=$1 src out
  src=$(consumer_source)
  out=$scratch/consumer-build-$(echo "$prefix" | tr / _)
  cmake -S "$src" -B "$out" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$out" -j"$jobs" >/dev/null
  local n=0 exe
  for exe in $(find "$out" -maxdepth 1 -type f -executable); do
    (cd "$scratch" && LD_LIBRARY_PATH="$prefix/lib" "$exe" >/dev/null) || fail "$exe (find_package build against $prefix) exits $?"
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || fail "the find_package build against $prefix made no program"
  # examples/view_curves: the views (pe/view.h) wrote their CSV and pictures.
  if [ -f "$src/view_curves.cc" ]; then
    head -1 "$scratch/qk.csv" | grep -qx 'series,k,qk' || fail "view_curves: qk.csv has no 'series,k,qk' header"
    [ "$(head -c 4 "$scratch/qk.png" | tail -c 3)" = PNG ] || fail "view_curves: qk.png is not a PNG"
    grep -q '<text' "$scratch/alibi_heads.svg" || fail "view_curves: alibi_heads.svg has no <text>"
    rm -f "$scratch/qk.csv" "$scratch/qk.png" "$scratch/alibi_heads.svg"
  fi
  echo "find_package(pe CONFIG) against $prefix: $n program(s) built and run"
  # pkg-config: each .cc of the consumer folder (one program per file).
  local pc_path="$prefix/lib/pkgconfig:$prefix/lib/$(gcc -print-multiarch)/pkgconfig"
  local cflags libs
  cflags=$(PKG_CONFIG_PATH=$pc_path pkg-config --cflags pe)
  libs=$(PKG_CONFIG_PATH=$pc_path pkg-config --libs pe)
  for cc in "$src"/*.cc; do
    exe=$scratch/pc-$(basename "$cc" .cc)
    # shellcheck disable=SC2086
    g++ -std=c++20 $cflags "$cc" -o "$exe" $libs -Wl,-rpath,"$prefix/lib"
    (cd "$scratch" && "$exe" >/dev/null) || fail "$exe (pkg-config build against $prefix) exits $?"
  done
  echo "pkg-config pe against $prefix: $(ls "$src"/*.cc | wc -l) program(s) built and run"
}

say "cmake --install $build --prefix $scratch/prefix"
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/pe share/man/man1/pe.1 share/man/man1/pe-generate.1 share/bash-completion/completions/pe \
         share/zsh/site-functions/_pe share/fish/vendor_completions.d/pe.fish share/doc/pe/cli.md \
         lib/libpe.a lib/libpe.so lib/cmake/pe/pe-config.cmake lib/cmake/pe/pe-config-version.cmake \
         lib/pkgconfig/pe.pc; do
  [ -e "$prefix/$f" ] || fail "cmake --install did not install $f"
done
"$prefix/bin/pe" generate --d-model 64 --max-len 16 -o "$scratch/prefix-pe.h5"
"$prefix/bin/pe" inspect "$scratch/prefix-pe.h5" >/dev/null
MANPATH=$prefix/share/man man -w pe >/dev/null || fail "man -w pe with MANPATH=$prefix/share/man"
consumer_builds "$prefix"
python_built=0
if grep -q '^PE_BUILD_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then python_built=1; fi
if [ "$python_built" = 1 ]; then
  pydir=$(/usr/bin/python3 "$root/cmake/pe_python_dir.py" "$prefix" | sed -n 1p)
  [ -f "$pydir/pe/__init__.py" ] || fail "cmake --install did not put the Python package in $pydir"
  (cd "$scratch" && PYTHONPATH=$pydir /usr/bin/python3 -c 'import pe; assert pe.__file__.startswith("'"$pydir"'"); print("import pe from", pe.__file__, pe.__version__)') \
    || fail "python3 cannot import pe from $pydir"
  say "wheel (python3 -m build --no-isolation --wheel) into a fresh venv"
  if /usr/bin/python3 -c 'import build' 2>/dev/null; then
    PE_WHEEL_BUILD_DIR=$build /usr/bin/python3 -m build --no-isolation --wheel --outdir "$scratch/dist" "$root" >/dev/null
  else
    PE_WHEEL_BUILD_DIR=$build /usr/bin/python3 -m pip wheel --no-build-isolation --no-deps -w "$scratch/dist" "$root" >/dev/null
  fi
  wheel=$(ls "$scratch"/dist/pe-*.whl)
  /usr/bin/python3 -m venv --system-site-packages "$scratch/venv"
  "$scratch/venv/bin/python" -m pip install --no-index --no-deps --quiet "$wheel"
  (cd "$scratch" && "$scratch/venv/bin/python" -c 'import pe, sys; assert pe.__file__.startswith(sys.prefix); print("venv: import pe", pe.__version__, pe.generate(d_model=4, max_len=2).table.shape)') \
    || fail "the wheel $wheel does not import in a fresh venv"
fi

if [ "${PE_SMOKE_DEB:-1}" = 0 ]; then echo "package-smoke: .deb skipped (PE_SMOKE_DEB=0)"; exit 0; fi
if [ "$(id -u)" -ne 0 ] || ! command -v dpkg >/dev/null; then
  echo "package-smoke: .deb skipped (needs root and dpkg)"
  exit 0
fi
for p in pe libpe-dev python3-pe; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    fail "a package named $p is already installed; not replacing it"
  fi
done

say "cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$scratch/deb" >/dev/null)
deb=$(ls "$scratch"/deb/pe_*.deb)
dev=$(ls "$scratch"/deb/libpe-dev_*.deb)
debs=("$deb" "$dev")
names=(pe libpe-dev)
dpkg-deb -I "$deb"
depends=$(dpkg-deb -f "$deb" Depends)
[ -n "$depends" ] || fail "the package has no Depends"
if echo "$depends" | tr ',' '\n' | grep -E -- '-dev( |$)'; then fail "pe's Depends names a -dev package: $depends"; fi
dpkg-deb -c "$deb" >"$scratch/deb-contents.txt"
grep -q '/usr/bin/pe$' "$scratch/deb-contents.txt" || fail "the package pe lacks /usr/bin/pe"
grep -q '/usr/share/man/man1/pe.1' "$scratch/deb-contents.txt" || fail "the package pe lacks its man page"
if grep -E '/usr/include/|\.so|\.a$|dist-packages' "$scratch/deb-contents.txt"; then fail "the package pe holds library or Python files"; fi
dpkg-deb -c "$dev" >"$scratch/dev-contents.txt"
for f in /usr/include/pe/pe.h /libpe.a /libpe.so /cmake/pe/pe-config.cmake /pkgconfig/pe.pc; do
  grep -q -- "$f\$\|$f " "$scratch/dev-contents.txt" || fail "libpe-dev lacks $f"
done
if [ "$python_built" = 1 ]; then
  py=$(ls "$scratch"/deb/python3-pe_*.deb)
  debs+=("$py")
  names+=(python3-pe)
  pydepends=$(dpkg-deb -f "$py" Depends)
  echo "python3-pe Depends: $pydepends"
  for d in python3 python3-numpy; do
    echo "$pydepends" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -qx "$d" || fail "python3-pe does not depend on $d: $pydepends"
  done
  dpkg-deb -c "$py" >"$scratch/py-contents.txt"
  grep -q '/usr/lib/python3/dist-packages/pe/__init__.py' "$scratch/py-contents.txt" || fail "python3-pe lacks dist-packages/pe"
fi

say "dpkg -i ${names[*]}"
trap 'dpkg -r "${names[@]}" >/dev/null 2>&1; dpkg -P "${names[@]}" >/dev/null 2>&1 || true' EXIT
dpkg -i "${debs[@]}" >/dev/null
mkdir -p "$scratch/x"
pe generate --d-model 64 --max-len 16 -o "$scratch/x/pe.h5"
pe inspect "$scratch/x/pe.h5" | sed -n 1,3p
man -w pe || fail "man -w pe after dpkg -i"
man -w pe-generate >/dev/null || fail "man -w pe-generate after dpkg -i"
got=$(bash -c 'source /usr/share/bash-completion/completions/pe; COMP_WORDS=(pe gen); COMP_CWORD=1; _pe; echo "${COMPREPLY[*]}"')
[ "$got" = generate ] || fail "bash completion of 'pe gen': '$got'"
echo "bash completion: 'pe gen<TAB>' -> $got"
[ "$(readlink -f "$(command -v pe)")" = /usr/bin/pe ] || fail "pe on PATH is not /usr/bin/pe"
consumer_builds /usr
if [ "$python_built" = 1 ]; then
  (cd "$scratch" && /usr/bin/python3 -c 'import pe; assert pe.__file__.startswith("/usr/lib/python3/dist-packages/"); print("python3-pe: import pe", pe.__version__)') \
    || fail "python3 cannot import pe after dpkg -i python3-pe"
fi

say "dpkg -r ${names[*]}"
dpkg -r "${names[@]}" >/dev/null
dpkg -P "${names[@]}" >/dev/null  # and their dpkg records (no configuration files to keep)
trap - EXIT
[ ! -e /usr/bin/pe ] || fail "/usr/bin/pe is still there after dpkg -r"
echo "package-smoke: ok"
