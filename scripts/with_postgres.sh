#!/usr/bin/env bash
# Usage: scripts/with_postgres.sh CMD [ARG...]
#
# Runs CMD with a throwaway PostgreSQL server (so the registry suite runs against
# a real PostgreSQL). The server lives in a fresh temporary folder,
# listens on 127.0.0.1 only (trust authentication, loopback), on the first free
# port from $EAGLE_PG_PORT (default 54329), and is stopped and deleted when CMD
# ends, fails or is interrupted. CMD sees
#   EAGLE_TEST_POSTGRES="host=127.0.0.1 port=PORT user=postgres dbname=postgres"
# and the script exits with CMD's status. Quiet unless something goes wrong.
#
# If EAGLE_TEST_POSTGRES is already set (an outer with_postgres.sh, or a server
# of your own), CMD simply runs against it.
#
# PostgreSQL refuses to run as root, and CI runs as root: initdb and pg_ctl then
# run as the `postgres` user the Debian package creates (runuser -u postgres).
# Needs the Debian package `postgresql` (initdb, pg_ctl, pg_isready).
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 CMD [ARG...]" >&2
  exit 2
fi

if [ -n "${EAGLE_TEST_POSTGRES:-}" ]; then
  exec "$@"
fi

log() { echo "with_postgres: $*" >&2; }

bindir="${PG_BINDIR:-}"
if [ -z "$bindir" ]; then
  bindir="$(printf '%s\n' /usr/lib/postgresql/*/bin | grep -v '\*' | sort -V | tail -n 1 || true)"
fi
for tool in initdb pg_ctl pg_isready; do
  if [ -z "$bindir" ] || [ ! -x "$bindir/$tool" ]; then
    log "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)"
    exit 127
  fi
done

as_root=0
if [ "$(id -u)" -eq 0 ]; then
  as_root=1
  if ! id postgres >/dev/null 2>&1; then
    log "running as root but there is no 'postgres' user to run the server as (apt-get install postgresql)"
    exit 1
  fi
fi

tmp="$(mktemp -d /tmp/eagle-pg.XXXXXX)"
started=0
up=0
status=1

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  local rc=$?
  if [ "$started" -eq 1 ]; then
    pg -- "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Runs a PostgreSQL tool as the server's owner, from a folder it can read.
pg() {
  shift  # the "--"
  if [ "$as_root" -eq 1 ]; then
    (cd "$tmp" && runuser -u postgres -- "$@")
  else
    (cd "$tmp" && "$@")
  fi
}

if [ "$as_root" -eq 1 ]; then chown postgres: "$tmp"; fi
chmod 700 "$tmp"

# UTF-8 with a UTF-8 ctype: ILIKE then folds non-ASCII letters as the SQLite
# backend's utf8proc fold does (the registry suite checks it).
locale_opt="--locale=C.UTF-8"
if ! locale -a 2>/dev/null | grep -qi '^c\.utf-\?8$'; then
  log "C.UTF-8 locale missing; the server folds only ASCII case in ILIKE"
  locale_opt="--locale=C"
fi
if ! pg -- "$bindir/initdb" -D "$tmp/data" -U postgres -A trust -E UTF8 "$locale_opt" -N \
    >"$tmp/initdb.log" 2>&1; then
  log "initdb failed:"
  cat "$tmp/initdb.log" >&2
  exit 1
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

port="${EAGLE_PG_PORT:-54329}"
for _ in $(seq 1 20); do
  if port_in_use "$port"; then
    port=$((port + 1))
    continue
  fi
  # A throwaway server: no fsync, socket in the temporary folder, loopback only.
  # Marked started before the attempt: a signal during pg_ctl start runs the trap
  # after it returns, and the trap must then stop what it started.
  started=1
  if pg -- "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 60 \
      -o "-p $port -k $tmp -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >/dev/null 2>&1; then
    up=1
    break
  fi
  # Another process took the port between the probe and the start: try the next.
  if grep -q "could not bind\|Address already in use\|could not create any TCP/IP sockets" "$tmp/server.log" 2>/dev/null; then
    : >"$tmp/server.log"
    port=$((port + 1))
    continue
  fi
  log "the server did not start:"
  cat "$tmp/server.log" >&2 2>/dev/null || true
  exit 1
done
if [ "$up" -ne 1 ]; then
  log "no free port found from ${EAGLE_PG_PORT:-54329} to $port"
  exit 1
fi

for i in $(seq 1 60); do
  if "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres; then break; fi
  if [ "$i" -eq 60 ]; then
    log "the server on port $port does not accept connections:"
    cat "$tmp/server.log" >&2 2>/dev/null || true
    exit 1
  fi
  sleep 0.5
done

export EAGLE_TEST_POSTGRES="host=127.0.0.1 port=$port user=postgres dbname=postgres"
set +e
"$@"
status=$?
set -e
exit "$status"
