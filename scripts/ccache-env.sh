# Sourced by the build scripts (scripts/test.sh, scripts/sanitize.sh,
# scripts/quickstart.sh): compile through ccache when it is installed (the
# test set of scripts/setup-deps.sh installs it). The cache lives outside the
# clone, in ${PE_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pe/ccache}, and
# paths are hashed relative to the repository root (CCACHE_BASEDIR), so a
# fresh clone in another folder, as CI makes one, reuses what an earlier
# build compiled. PE_CCACHE=0 turns it off. Sets PE_CCACHE_CMAKE, the cmake
# arguments that select the launcher (empty without ccache).
PE_CCACHE_CMAKE=()
if [ "${PE_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
  export CCACHE_DIR=${PE_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pe/ccache}
  export CCACHE_BASEDIR=${root:?ccache-env.sh needs root set to the repository root}
  export CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-6G}
  mkdir -p "$CCACHE_DIR"
  PE_CCACHE_CMAKE=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
