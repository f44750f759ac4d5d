#!/bin/sh
# Creates what docker/compose.yml needs and git must never hold, beside this script:
#
#   svc.env                        SVC_SIGNING_KEY (a new Ed25519 key) and MONGODB_URI (svc's
#                                  MongoDB user and password, authSource=admin)
#   secrets/key-encryption-secret  32 random bytes, hex: the secret box of webhook secrets
#   secrets/mongo-root-password    MongoDB's root user (administration only)
#   secrets/mongo-svc-password     MongoDB's svc user (readWrite on the svc database)
#   secrets/mongo-keyfile          the replica set's internal authentication key
#
# A file that exists is kept: a new signing key would start receipts no published key
# verifies, and new MongoDB passwords would no longer match the users MongoDB created on its
# first start. Needs openssl. Run from anywhere: sh docker/init-secrets.sh
set -eu
cd "$(dirname "$0")"
umask 077
mkdir -p secrets
chmod 0700 secrets

new_secret() { # file, then the openssl rand arguments
  file=$1
  shift
  if [ ! -s "$file" ]; then
    openssl rand "$@" > "$file"
    echo "created docker/$file"
  fi
  # Read inside the containers by users other than yours (node, mongodb); the directory
  # (0700) keeps other users of this machine out.
  chmod 0644 "$file"
}

new_secret secrets/key-encryption-secret -hex 32
new_secret secrets/mongo-root-password -hex 24
new_secret secrets/mongo-svc-password -hex 24
new_secret secrets/mongo-keyfile -base64 756

if [ ! -s svc.env ]; then
  # One line, newlines written as \n, as svc accepts it from an env file.
  key=$(openssl genpkey -algorithm ed25519 | awk '{printf "%s\\n", $0}')
  password=$(cat secrets/mongo-svc-password)
  {
    printf 'SVC_SIGNING_KEY=%s\n' "$key"
    printf 'MONGODB_URI=mongodb://svc:%s@mongo:27017/svc?replicaSet=rs0&authSource=admin\n' "$password"
  } > svc.env
  echo "created docker/svc.env"
fi
chmod 0600 svc.env
