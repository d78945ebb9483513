#!/usr/bin/env bash
# The packaged-install check (issue 33): what a user gets from `npm install -g imgtool` or
# `npx imgtool`, on the Node that is first on PATH. Run by .ci/run on Node 24.
#
#   1. `npm pack` (dist must be built), and the tarball ships no tests, benches or built models;
#   2. `npm install -g --prefix DIR` of the tarball, once with install scripts and once with
#      --ignore-scripts; in each, with a fresh HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME:
#      `imgtool --version`, the README's main job on the shipped samples (3 cut-outs, 3 credits,
#      models assembled on first use into $XDG_CACHE_HOME/imgtool/models), `imgtool models
#      verify`, and `npm ls sharp onnxruntime-node` in the installed tree: one of each;
#      the --ignore-scripts install also runs `imgtool models build` (the Dockerfile step) and
#      verifies that every model is then present;
#   3. `npx --yes --package <tarball> imgtool remove-background samples/butterfly.jpg -o DIR`
#      from an empty folder.
# Dependencies come from the npm registry (a local tarball's dependencies still do); nothing
# else is reached. Prints the time of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/imgtool-package-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
T0=$SECONDS
step() { printf '\ncheck-package [%4ds] %s\n' "$((SECONDS - T0))" "$*" >&2; }
fail() {
  printf 'check-package: FAIL: %s\n' "$*" >&2
  exit 1
}

# A global install reads no project .npmrc, so none of the clone's settings apply: give npm an
# empty user config, as on a new machine, and no onnxruntime-node install switch: every install
# script in the tree runs and must fetch nothing (this machine reaches only the npm registry, so
# a script that downloads fails the install; docs/models.md lists what each script does).
: >"$WORK/npmrc"
export npm_config_userconfig="$WORK/npmrc"
export npm_config_cache="${IMGTOOL_CHECK_NPM_CACHE:-$WORK/npm-cache}"
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
unset IMGTOOL_MODELS_DIR IMGTOOL_HOME ONNXRUNTIME_NODE_INSTALL ONNXRUNTIME_NODE_INSTALL_CUDA
unset npm_config_onnxruntime_node_install npm_config_legacy_peer_deps
# npm >= 11.x with allowScripts skips dependencies' install scripts unless approved; npm 10 (Node
# 22's) runs them all. "With scripts" means all of them, as npm 10 does.
ALL_SCRIPTS=()
[ "$(npm config get dangerously-allow-all-scripts 2>/dev/null)" = false ] && ALL_SCRIPTS=(--dangerously-allow-all-scripts)
VERSION=$(node -p "require('./package.json').version")
echo "check-package: node $(node --version), npm $(npm --version), imgtool $VERSION" >&2

step "npm pack"
[ -f dist/cli/main.js ] || fail "dist/ is not built (npm run build)"
npm pack --ignore-scripts --pack-destination "$WORK" >/dev/null
TGZ=$(ls "$WORK"/imgtool-*.tgz)
tar tzf "$TGZ" >"$WORK/contents"
echo "check-package: $(wc -l <"$WORK/contents") files, $(du -k "$TGZ" | cut -f1) KB packed" >&2
for need in package/bin/imgtool.js package/dist/cli/main.js package/models/manifest.json package/models/build.mjs \
  package/models/calibration/isnet.json package/models/convert/onnx.proto package/samples/butterfly.jpg package/README.md; do
  grep -qx "$need" "$WORK/contents" || fail "the tarball lacks $need"
done
if grep -E '^package/(test|bench|scripts|\.ci|models/build)/|\.test\.|\.onnx$' "$WORK/contents"; then fail "the tarball ships tests, benches or models"; fi

# One user on a new machine: fresh HOME, caches and config; the main job in an empty folder.
user_env() {
  local name=$1
  mkdir -p "$WORK/$name/home" "$WORK/$name/run"
  export HOME="$WORK/$name/home" XDG_CACHE_HOME="$WORK/$name/cache" XDG_CONFIG_HOME="$WORK/$name/config"
}

one_of_each() {
  local prefix=$1 pkg n
  for pkg in sharp onnxruntime-node; do
    n=$(npm ls -g --prefix "$prefix" --all --parseable "$pkg" | grep -c "/node_modules/$pkg$" || true)
    [ "$n" = 1 ] || {
      npm ls -g --prefix "$prefix" --all "$pkg" >&2 || true
      fail "$n copies of $pkg in the installed tree, expected 1"
    }
  done
  npm ls -g --prefix "$prefix" --all sharp onnxruntime-node >&2
}

for mode in scripts ignore-scripts; do
  (
    prefix="$WORK/$mode/prefix"
    flags=()
    if [ "$mode" = ignore-scripts ]; then flags+=(--ignore-scripts); else flags+=("${ALL_SCRIPTS[@]}" --foreground-scripts); fi
    user_env "$mode"
    step "[$mode] npm install -g --prefix $prefix ${flags[*]} imgtool-$VERSION.tgz"
    s=$SECONDS
    npm install -g --prefix "$prefix" "${flags[@]}" "$TGZ" >"$WORK/$mode/install.log" 2>&1 || {
      cat "$WORK/$mode/install.log" >&2
      fail "[$mode] npm install -g failed"
    }
    grep -v '^npm warn' "$WORK/$mode/install.log" >&2 || true
    echo "check-package: [$mode] install: $((SECONDS - s)) s, $(du -sm "$prefix" | cut -f1) MB" >&2
    [ -x "$prefix/bin/imgtool" ] || fail "[$mode] no imgtool on the prefix's bin"
    export PATH="$prefix/bin:$PATH"
    [ "$(command -v imgtool)" = "$prefix/bin/imgtool" ] || fail "[$mode] imgtool resolves to $(command -v imgtool)"

    step "[$mode] npm ls sharp onnxruntime-node"
    one_of_each "$prefix"

    step "[$mode] imgtool --version"
    [ "$(imgtool --version)" = "$VERSION" ] || fail "[$mode] imgtool --version printed $(imgtool --version)"

    cd "$WORK/$mode/run"
    cp -r "$prefix/lib/node_modules/imgtool/samples" .
    models=$(imgtool models path)
    [ "$models" = "$XDG_CACHE_HOME/imgtool/models" ] || fail "[$mode] models path is $models"
    [ ! -e "$models" ] || fail "[$mode] models exist before first use"

    step "[$mode] imgtool remove-background 'samples/*.jpg' -o out/ (first use: models assembled into $models)"
    s=$SECONDS
    imgtool remove-background 'samples/*.jpg' -o out/ 2>"$WORK/$mode/stderr" || {
      cat "$WORK/$mode/stderr" >&2
      fail "[$mode] the main job failed"
    }
    cat "$WORK/$mode/stderr" >&2
    echo "check-package: [$mode] main job with first-use assembly: $((SECONDS - s)) s" >&2
    [ "$(find out -name '*.png' | wc -l)" = 3 ] || fail "[$mode] expected 3 cut-outs in out/, got: $(ls out)"
    grep -q 'model .* assembled into ' "$WORK/$mode/stderr" || fail "[$mode] no model was assembled on first use"
    [ "$(imgtool credits --json)" = '{"credits_remaining":97}' ] || fail "[$mode] credits: $(imgtool credits --json), expected 97 (3 spent)"
    s=$SECONDS
    imgtool remove-background samples/fruits.jpg -o again/ 2>"$WORK/$mode/stderr2"
    ! grep -q 'assembled' "$WORK/$mode/stderr2" || fail "[$mode] the second run assembled models again"
    echo "check-package: [$mode] a second run (models present): $((SECONDS - s)) s" >&2

    step "[$mode] imgtool models verify"
    imgtool models verify >&2

    if [ "$mode" = ignore-scripts ]; then
      step "[$mode] imgtool models build (every model, as a Dockerfile would)"
      s=$SECONDS
      imgtool models build >&2
      echo "check-package: [$mode] models build: $((SECONDS - s)) s" >&2
      imgtool models verify --json | node -e '
        const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
        const bad = r.filter((m) => m.status !== "ok");
        if (bad.length) { console.error("not ok:", bad.map((m) => m.id + " " + m.status).join(", ")); process.exit(1); }
        console.error(`check-package: all ${r.length} models ok`);'
    fi
  )
done

step "npx --yes --package imgtool-$VERSION.tgz imgtool remove-background samples/butterfly.jpg -o out (from an empty folder)"
(
  user_env npx
  cd "$WORK/npx/run"
  npx --yes "${ALL_SCRIPTS[@]}" --package "$TGZ" imgtool remove-background "$ROOT/samples/butterfly.jpg" -o out >"$WORK/npx/log" 2>&1 || {
    cat "$WORK/npx/log" >&2
    fail "npx failed"
  }
  grep -v '^npm warn' "$WORK/npx/log" >&2 || true
  [ -f out/butterfly.remove-background.png ] || fail "npx: no out/butterfly.remove-background.png ($(ls -A out 2>&1))"
)

step "all checks passed"
