#!/usr/bin/env bash
# Installs the Debian packages the tests and the demo use, when they are missing (apt-get: needs root).
#   scripts/system-packages.sh        everything `make test` needs: chromium (browser tests), prometheus
#                                     (real metrics behind analyses), kubectl (simulator checks), redis,
#                                     postgresql, gcc (`make compile`: the domain compiled with mypyc);
#                                     fails, naming the packages, when it cannot install them.
#   scripts/system-packages.sh demo   what `make demo` uses: prometheus (live analysis charts). Never fails:
#                                     the demo runs without it and says in one line what is missing.
set -euo pipefail
mode=${1:-test}
need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
if [ "$mode" != demo ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v kubectl >/dev/null 2>&1 || need+=(kubernetes-client)
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  command -v pg_ctlcluster >/dev/null 2>&1 || need+=(postgresql)
  command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
fi
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  if [ "$mode" = demo ]; then
    exit 0  # the demo itself says what is missing without them and how to install them
  fi
  echo "missing system packages: ${need[*]} — install them with: sudo apt-get install ${need[*]}" >&2
  exit 1
fi
echo "installing system packages: ${need[*]}"
log=$(mktemp)
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; } >"$log" 2>&1; then
  echo "could not install ${need[*]}: $(grep -E '^E:' "$log" | tail -1 || tail -1 "$log")" >&2
  rm -f "$log"
  [ "$mode" = demo ] && exit 0
  exit 1
fi
rm -f "$log"
