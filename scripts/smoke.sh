#!/usr/bin/env bash
# A short smoke on whichever Node is on PATH: build, start the service on the embedded store
# (a temporary data directory, a free port on 127.0.0.1), then walk through the README's
# walkthrough — sign up, evaluate, verify online, verify offline with svc-verify and with
# node:crypto — and stop. Used by .ci/run on the maintenance line (Node 22).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "smoke: Node $(node --version)" >&2
npm run --silent build

work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
base="http://127.0.0.1:$port"
HOST=127.0.0.1 PORT=$port SVC_DATA_DIR="$work/data" LOG_LEVEL=warn \
  node --max-semi-space-size=8 dist/src/server.js >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  curl -sf "$base/health" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "smoke: the service exited" >&2; exit 1; }
  sleep 0.2
done
curl -sf "$base/health?deep=true" >/dev/null || { echo "smoke: not healthy" >&2; exit 1; }

json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=process.argv[1].split(".").reduce((o,k)=>o?.[k],JSON.parse(s));console.log(typeof v==="string"?v:JSON.stringify(v))})' "$1"; }

key=$(curl -sf -X POST "$base/v1/signup" -H 'Content-Type: application/json' \
  -d '{"email":"smoke@example.com"}' | json api_key)
curl -sf -X POST "$base/v1/evaluate" -H "X-API-Key: $key" -H 'Content-Type: application/json' \
  -d '{
    "claim_id": "acme-web-pr-42-a1b2c3d",
    "entity": "acme/web",
    "claim": "Merge PR #42: fix session timeout",
    "action": { "action_type": "merge", "target_system": "github", "repository": "acme/web",
                "pull_request": 42, "commit": "a1b2c3d", "agent": "coder-bot" },
    "sources": [
      { "id": "ci-981", "type": "ci", "uri": "https://ci.example.com/runs/981",
        "confidence": 0.95, "content": "312 tests passed" },
      { "id": "review-7", "type": "code_review", "uri": "https://scm.example.com/acme/web/pull/42",
        "confidence": 0.85, "content": "Approved by a maintainer" }
    ]
  }' >"$work/evaluation.json"
[ "$(json decision.proceed <"$work/evaluation.json")" = "true" ] || { echo "smoke: evaluate did not proceed" >&2; exit 1; }
json receipt <"$work/evaluation.json" >"$work/receipt.json"

[ "$(curl -sf -X POST "$base/v1/verify" -H 'Content-Type: application/json' \
  -d @"$work/receipt.json" | json valid)" = "true" ] || { echo "smoke: /v1/verify said not valid" >&2; exit 1; }

curl -sf "$base/v1/keys/server" >"$work/server.pem"
node packages/verify/dist/cli/svc-verify.js "$work/receipt.json" --key "$work/server.pem" --require-proceed
node --input-type=module -e '
import canonicalize from "canonicalize";
import { verify } from "node:crypto";
import { readFileSync } from "node:fs";
const [receiptFile, keyFile] = process.argv.slice(1);
const receipt = JSON.parse(readFileSync(receiptFile, "utf8"));
const core = Object.fromEntries(receipt.signed_fields.fields.map((f) => [f, receipt[f]]));
const ok = verify(null, Buffer.from(canonicalize(core), "utf8"), readFileSync(keyFile, "utf8"),
  Buffer.from(receipt.attestations[0].signature, "base64"));
if (!ok) { console.error("smoke: node:crypto says the signature is bad"); process.exit(1); }
' "$work/receipt.json" "$work/server.pem"

kill "$pid"
wait "$pid" || true
pid=
echo "smoke: passed on Node $(node --version)" >&2
