#!/usr/bin/env bash
# Installs the Debian packages the tests and the demo use, when they are missing:
# chromium (browser tests), prometheus (real metrics behind analyses), kubectl (simulator checks).
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v pg_ctlcluster >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "missing system packages: ${need[*]} — install them with: sudo apt-get install ${need[*]}" >&2
  exit 1
fi
echo "installing system packages: ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
