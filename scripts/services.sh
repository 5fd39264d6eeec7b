#!/usr/bin/env bash
# Makes sure the real Redis and PostgreSQL the test suite talks to are up on 127.0.0.1, starting
# them if they are not, and fails loudly if they cannot be reached.
set -uo pipefail

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

if ! redis_up; then
  echo "starting redis on 127.0.0.1:6379"
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  for _ in $(seq 1 50); do redis_up && break; sleep 0.1; done
fi
if ! pg_up; then
  echo "starting postgresql on 127.0.0.1:5432"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 100); do pg_up && break; sleep 0.1; done
fi

redis_up || { echo "FATAL: Redis is not reachable on 127.0.0.1:6379" >&2; exit 1; }
pg_up || { echo "FATAL: PostgreSQL is not reachable on 127.0.0.1:5432" >&2; exit 1; }
echo "services: redis and postgresql are up"
