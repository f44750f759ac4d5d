#!/usr/bin/env bash
# Exit 1, saying why, unless the `node` on PATH is a supported line: 22 (22.20 or newer) or
# 24 (24.11, its first LTS release, or newer). package.json's engines states the same range.
set -euo pipefail
version=$(node -p 'process.versions.node' 2>/dev/null) || {
  echo "require-node: no working node on PATH" >&2
  exit 1
}
IFS=. read -r major minor _ <<<"$version"
if { [ "$major" -eq 22 ] && [ "$minor" -ge 20 ]; } || [ "$major" -gt 24 ] ||
  { [ "$major" -eq 24 ] && [ "$minor" -ge 11 ]; }; then
  echo "require-node: Node $version" >&2
  exit 0
fi
echo "require-node: Node $version is not a supported line (24.11+ or 22.20+);" \
  "run 'source scripts/provision-node.sh' to get Node 24 from the npm registry" >&2
exit 1
