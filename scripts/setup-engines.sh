#!/usr/bin/env bash
# Installs the engines pe's test suite uses as oracles (docs: DESIGN.md "The
# engines"), pinned, from their npm packages, into a cache folder later runs
# reuse:
#
#   ${PE_ENGINES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pe/engines}/
#     node-llama-cpp-3.21.1/        llama.cpp release v0.4.0 (commit 80fb11ac), CPU only
#       node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/
#                                   libggml-base.so, libggml.v0.4.0.so,
#                                   libggml-cpu-<variant>.so (loaded by score),
#                                   libllama.v0.4.0.so
#       llama-src/                  from the package's llama/gitRelease.bundle:
#                                   ggml/include, include (the C API), COMMIT, and
#                                   a few sources the harnesses transcribe
#     onnxruntime-node-1.30.0/      onnxruntime-node (its install script not run)
#
#   PE_ENGINES=llama.cpp|onnxruntime|llama.cpp,onnxruntime (default: both)
#
# Idempotent: a folder with its .pe-installed stamp is kept as it is. Installs
# go to a temporary folder renamed into place, so a failure leaves nothing.
# Without a reachable npm registry it prints "skipped: npm registry not
# reachable" and exits 0. tests/engines/engines.py finds what is installed.
set -euo pipefail

DIR=${PE_ENGINES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pe/engines}
ENGINES=${PE_ENGINES:-llama.cpp,onnxruntime}

NLC_VERSION=3.21.1
NLC_COMMIT=80fb11ac73e66d89eae2c6a91d8a77428fa733ed
ORT_VERSION=1.30.0

NPM_FLAGS=(-E --ignore-scripts --no-audit --no-fund --no-update-notifier --loglevel=error
           --fetch-retries=0 --fetch-timeout=20000)

want() { [[ ",$ENGINES," == *",$1,"* ]]; }

for e in ${ENGINES//,/ }; do
    case $e in llama.cpp|onnxruntime) ;; *) echo "setup-engines: unknown engine '$e' in PE_ENGINES (llama.cpp, onnxruntime)" >&2; exit 2 ;; esac
done

command -v npm >/dev/null || { echo "skipped: npm not installed"; exit 0; }

TMP=""
cleanup() { [[ -n $TMP && -d $TMP ]] && rm -rf "$TMP"; return 0; }
trap cleanup EXIT

registry_checked=0
check_registry() {
    (( registry_checked )) && return 0
    if ! npm ping --fetch-retries=0 --fetch-timeout=10000 --loglevel=silent >/dev/null 2>&1; then
        echo "skipped: npm registry not reachable ($(npm config get registry 2>/dev/null))"
        exit 0
    fi
    registry_checked=1
}

# npm_into FOLDER PACKAGE...: a fresh npm project in $TMP/FOLDER with PACKAGEs installed
npm_into() {
    local dest=$1; shift
    mkdir -p "$dest"
    printf '{ "name": "pe-engine", "private": true }\n' >"$dest/package.json"
    if ! (cd "$dest" && npm install "${NPM_FLAGS[@]}" "$@" >npm-install.log 2>&1); then
        if grep -qE 'ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|ECONNRESET|ENETUNREACH' "$dest/npm-install.log"; then
            echo "skipped: npm registry not reachable (npm install $*)"
            exit 0
        fi
        echo "setup-engines: npm install $* failed:" >&2
        tail -n 20 "$dest/npm-install.log" >&2
        exit 1
    fi
}

# ------------------------------------------------------------------ llama.cpp
if want llama.cpp; then
    dest="$DIR/node-llama-cpp-$NLC_VERSION"
    bins="$dest/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
    if [[ -f $dest/.pe-installed ]]; then
        echo "llama.cpp: present in $dest (libs $bins, headers $dest/llama-src/ggml/include $dest/llama-src/include)"
    else
        check_registry
        command -v git >/dev/null || { echo "setup-engines: git is needed to read llama/gitRelease.bundle" >&2; exit 1; }
        start=$SECONDS
        mkdir -p "$DIR"
        TMP=$(mktemp -d "$DIR/.tmp-node-llama-cpp.XXXXXX"); chmod 755 "$TMP"
        # --omit=optional: the CUDA/Vulkan/arm variants are optional dependencies of
        # node-llama-cpp (about 700 MB); the CPU linux-x64 one is named explicitly.
        npm_into "$TMP" --omit=optional "node-llama-cpp@$NLC_VERSION" "@node-llama-cpp/linux-x64@$NLC_VERSION"
        tbins="$TMP/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
        for f in libggml-base.so libggml.v0.4.0.so libllama.v0.4.0.so libggml-cpu-x64.so; do
            [[ -f $tbins/$f ]] || { echo "setup-engines: $f missing from @node-llama-cpp/linux-x64@$NLC_VERSION" >&2; exit 1; }
        done
        bundle="$TMP/node_modules/node-llama-cpp/llama/gitRelease.bundle"
        git init -q --bare "$TMP/bundle.git"
        git -C "$TMP/bundle.git" fetch -q "$bundle" HEAD
        head=$(git -C "$TMP/bundle.git" rev-parse FETCH_HEAD)
        if [[ $head != "$NLC_COMMIT" ]]; then
            echo "setup-engines: gitRelease.bundle HEAD is $head, expected $NLC_COMMIT" >&2; exit 1
        fi
        mkdir "$TMP/llama-src"
        # The C API (ggml/include, include) and the sources the harnesses and the
        # semantics table transcribe (rope kernel, rope/YaRN params, hparams loading).
        git -C "$TMP/bundle.git" archive FETCH_HEAD \
            ggml/include include LICENSE \
            ggml/src/ggml.c ggml/src/ggml-cpu/ops.cpp ggml/src/ggml-backend-reg.cpp \
            src/llama-hparams.h src/llama-hparams.cpp src/llama-arch.h src/llama-arch.cpp \
            src/llama-model.cpp src/llama-graph.cpp src/llama-cparams.h src/llama-context.cpp \
            src/models/llama.cpp src/models/models.h \
            | tar -x -C "$TMP/llama-src"
        echo "$head" >"$TMP/llama-src/COMMIT"
        rm -rf "$TMP/bundle.git"
        printf 'node-llama-cpp %s\nllama.cpp %s\ncommit %s\n' "$NLC_VERSION" \
            "$(sed -n 's/.*"release": *"\([^"]*\)".*/\1/p' "$tbins/_nlcBuildMetadata.json")" "$head" >"$TMP/.pe-installed"
        rm -rf "$dest"
        mv "$TMP" "$dest"
        TMP=""
        echo "llama.cpp: installed in $dest ($(du -sh "$dest" | cut -f1), $((SECONDS - start)) s; libs $bins, headers $dest/llama-src/ggml/include $dest/llama-src/include)"
    fi
fi

# ---------------------------------------------------------------- onnxruntime
if want onnxruntime; then
    dest="$DIR/onnxruntime-node-$ORT_VERSION"
    if [[ -f $dest/.pe-installed ]]; then
        echo "onnxruntime: present in $dest"
    else
        check_registry
        start=$SECONDS
        mkdir -p "$DIR"
        TMP=$(mktemp -d "$DIR/.tmp-onnxruntime-node.XXXXXX"); chmod 755 "$TMP"
        npm_into "$TMP" "onnxruntime-node@$ORT_VERSION"
        [[ -d $TMP/node_modules/onnxruntime-node ]] || { echo "setup-engines: onnxruntime-node missing after npm install" >&2; exit 1; }
        printf 'onnxruntime-node %s\n' "$ORT_VERSION" >"$TMP/.pe-installed"
        rm -rf "$dest"
        mv "$TMP" "$dest"
        TMP=""
        echo "onnxruntime: installed in $dest ($(du -sh "$dest" | cut -f1), $((SECONDS - start)) s)"
    fi
fi
