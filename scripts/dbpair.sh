#!/usr/bin/env bash
# The database as a replicated pair on this machine, managed by pg_auto_failover (Debian package
# postgresql-15-auto-failover): a monitor, a primary and a synchronous standby, each its own
# Postgres cluster on a free port under one directory. The monitor promotes the standby when the
# primary is lost; every commit is acknowledged only once the standby has it.
#
#   scripts/dbpair.sh start    # creates (first time) and runs the three; prints DATABASE_URL
#   scripts/dbpair.sh uri      # the multi-host URI of the running pair
#   scripts/dbpair.sh status   # pg_autoctl show state
#   scripts/dbpair.sh switchover  # the standby becomes the primary (a planned failover; waits for it)
#   scripts/dbpair.sh primary     # the name of the node that is primary now (node1 or node2)
#   scripts/dbpair.sh crash NODE  # kill -9 of that node's pg_autoctl and Postgres: the loss of its machine
#                                 # (`start` runs it again; it rejoins as the standby)
#   scripts/dbpair.sh stop     # stops the three (the data stays; start runs them again)
#   scripts/dbpair.sh destroy  # stops them and removes the directory
#
# DBPAIR_DIR: the directory (default .data/dbpair in the project). DBPAIR_USER: the OS user
# pg_autoctl runs as (Postgres refuses root; default: the current user, or `postgres` when run
# as root). DBPAIR_PORT: the first port tried (default 55432; the three take the next free ones).
# DBPAIR_TIMEOUT: seconds to wait for primary/secondary (default 120).
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${DBPAIR_DIR:-$PWD/.data/dbpair}"
TIMEOUT="${DBPAIR_TIMEOUT:-120}"
if [ "$(id -u)" = 0 ]; then RUN_AS="${DBPAIR_USER:-postgres}"; else RUN_AS="${DBPAIR_USER:-$(id -un)}"; fi
DBNAME=app
NODES=(monitor node1 node2)

die() { echo "dbpair: $*" >&2; exit 1; }
command -v pg_autoctl >/dev/null || die "pg_autoctl not found: apt-get install -y postgresql-15-auto-failover"
PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)"
[ -x "$PGBIN/pg_ctl" ] || die "no Postgres server binaries under /usr/lib/postgresql"

# Every pg_autoctl call runs as $RUN_AS with its config and state inside $DIR.
as_user() {
  local env=(env "PATH=$PGBIN:/usr/bin:/bin" "XDG_CONFIG_HOME=$DIR/config" "XDG_DATA_HOME=$DIR/share" "XDG_RUNTIME_DIR=$DIR/run" "PG_CONFIG=$PGBIN/pg_config")
  if [ "$(id -un)" = "$RUN_AS" ]; then "${env[@]}" "$@"; else runuser -u "$RUN_AS" -- "${env[@]}" "$@"; fi
}

port_free() { ! ss -Hatn "sport = :$1" 2>/dev/null | grep -q .; }
next_free_port() {
  local p=$1
  while ! port_free "$p"; do p=$((p + 1)); done
  echo "$p"
}

monitor_uri() { echo "postgres://autoctl_node@127.0.0.1:$(cat "$DIR/monitor.port")/pg_auto_failover?sslmode=disable"; }

# pg_autoctl's own connection string carries no user; the service needs one (DBPAIR_USER's role).
show_uri() {
  local uri
  uri="$(as_user pg_autoctl show uri --formation default --monitor "$(monitor_uri)")"
  echo "${uri/postgres:\/\//postgres://$RUN_AS@}"
}

run_node() { # name: runs `pg_autoctl run` for that node in the background, logging to $DIR/name.log
  local name=$1
  if [ -f "$DIR/$name.pid" ] && kill -0 "$(cat "$DIR/$name.pid")" 2>/dev/null; then return; fi
  as_user bash -c "exec setsid nohup pg_autoctl run --pgdata '$DIR/$name' >>'$DIR/$name.log' 2>&1 </dev/null & echo \$! >'$DIR/$name.pid'"
}

create() {
  mkdir -p "$DIR"/{config,share,run}
  chmod 700 "$DIR"
  [ "$(id -un)" = "$RUN_AS" ] || chown -R "$RUN_AS" "$DIR"
  as_user test -w "$DIR" || die "$RUN_AS cannot write $DIR: make its parent directories traversable (chmod o+x), or set DBPAIR_DIR"
  local port=${DBPAIR_PORT:-55432}
  for name in "${NODES[@]}"; do
    port=$(next_free_port "$port")
    as_user bash -c "echo $port >'$DIR/$name.port'"
    port=$((port + 1))
  done
  as_user pg_autoctl create monitor --pgdata "$DIR/monitor" --pgport "$(cat "$DIR/monitor.port")" \
    --hostname 127.0.0.1 --auth trust --no-ssl >>"$DIR/create.log" 2>&1 || die "monitor not created (see $DIR/create.log)"
  run_node monitor
  wait_for "the monitor" monitor_ready
  # Health checks for a pair on one machine: a node that stops answering is declared unhealthy
  # after 5 s instead of 20, and a promoted standby takes writes 5 s after its promotion instead
  # of 30 (the time a lost primary has to demote itself, pg_auto_failover's guard against two
  # primaries; its defaults are for separate machines and networks).
  psql "postgres://$RUN_AS@127.0.0.1:$(cat "$DIR/monitor.port")/pg_auto_failover" -qAt >/dev/null <<'SQL' || die "monitor settings not applied"
alter system set pgautofailover.health_check_period = 1000;
alter system set pgautofailover.health_check_timeout = 1000;
alter system set pgautofailover.health_check_retry_delay = 500;
alter system set pgautofailover.node_considered_unhealthy_timeout = 5000;
alter system set pgautofailover.primary_demote_timeout = 5000;
select pg_reload_conf();
SQL
  for name in node1 node2; do
    # One after the other: the first becomes the primary, the second is cloned from it.
    as_user pg_autoctl create postgres --pgdata "$DIR/$name" --pgport "$(cat "$DIR/$name.port")" \
      --hostname 127.0.0.1 --listen 127.0.0.1 --name "$name" --dbname "$DBNAME" --auth trust --no-ssl \
      --monitor "$(monitor_uri)" >>"$DIR/create.log" 2>&1 || die "$name not created (see $DIR/create.log)"
    run_node "$name"
    if [ "$name" = node1 ]; then wait_for "node1 to be single" node_state node1 single; fi
  done
}

monitor_ready() { "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$(cat "$DIR/monitor.port")"; }
# The monitor's table (`pg_autoctl show state`): prints "name state" for each node whose reported
# state is the one the monitor assigned (a node in transition prints nothing).
settled_states() {
  as_user pg_autoctl show state --monitor "$(monitor_uri)" 2>/dev/null |
    awk -F'|' 'NR > 2 && NF >= 7 { for (i = 1; i <= NF; i++) gsub(/^ +| +$/, "", $i); if ($6 == $7) print $1, $6 }'
}
node_state() { settled_states | grep -qx "$1 $2"; }
pair_ready() {
  local states
  states="$(settled_states | sort | awk '{ printf "%s/", $2 }')"
  [ "$states" = primary/secondary/ ] || [ "$states" = secondary/primary/ ]
}
wait_for() { # description command...
  local what=$1; shift
  local deadline=$((SECONDS + TIMEOUT))
  until "$@"; do
    if [ $SECONDS -ge $deadline ]; then tail -n 8 "$DIR"/*.log >&2; die "timed out waiting for $what (logs in $DIR/*.log)"; fi
    sleep 0.5
  done
}

start() {
  if [ ! -f "$DIR/node2/postgresql.conf" ]; then
    create
  else
    for name in "${NODES[@]}"; do run_node "$name"; done
    wait_for "the monitor" monitor_ready
  fi
  wait_for "the pair to be primary/secondary" pair_ready
  # Synchronous commit: with one standby in the replication quorum, pg_auto_failover's
  # number_sync_standbys 0 (the only value a pair accepts: 1 needs two standbys) sets the
  # primary's synchronous_standby_names to `ANY 1 (standby)`, so a commit is acknowledged once the
  # standby has flushed it. Refuse to report the pair ready otherwise.
  local sync
  sync="$(psql "$(show_uri)" -Atc 'show synchronous_standby_names' 2>/dev/null)"
  [ -n "$sync" ] || die "the primary has no synchronous standby (synchronous_standby_names is empty)"
  echo "dbpair: synchronous_standby_names = $sync" >&2
  as_user pg_autoctl show state --monitor "$(monitor_uri)" >&2
  echo "DATABASE_URL=$(show_uri)"
}

stop() {
  [ -d "$DIR" ] || return 0
  # Data nodes first, then the monitor (pg_autoctl stop waits for its service to end).
  for name in node2 node1 monitor; do
    [ -f "$DIR/$name/postgresql.conf" ] || continue
    as_user pg_autoctl stop --pgdata "$DIR/$name" >/dev/null 2>&1 || true
    if [ -f "$DIR/$name.pid" ]; then
      local pid deadline=$((SECONDS + 30))
      pid=$(cat "$DIR/$name.pid")
      while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null || true
      rm -f "$DIR/$name.pid"
    fi
  done
  echo "dbpair: stopped" >&2
}

descendants() { local p; [ -n "$1" ] || return 0; for p in $(pgrep -P "$1"); do echo "$p"; descendants "$p"; done; }

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  uri) show_uri ;;
  status) as_user pg_autoctl show state --monitor "$(monitor_uri)" ;;
  switchover) as_user pg_autoctl perform switchover --pgdata "$DIR/node1" --formation default --group 0 >&2; wait_for "the pair to be primary/secondary" pair_ready ;;
  primary) settled_states | awk '$2 == "primary" || $2 == "wait_primary" { print $1 }' ;;
  crash)
    name="${2:?usage: scripts/dbpair.sh crash node1|node2}"
    root_pid="$(cat "$DIR/$name.pid" 2>/dev/null || true)"
    pids="$root_pid $(descendants "$root_pid" | tr '\n' ' ') $(head -n1 "$DIR/$name/postmaster.pid" 2>/dev/null || true)"
    # shellcheck disable=SC2086
    kill -9 $pids 2>/dev/null || true
    rm -f "$DIR/$name.pid"
    echo "dbpair: killed $name ($pids)" >&2 ;;
  destroy) stop; rm -rf "$DIR" ;;
  *) echo "usage: scripts/dbpair.sh start|stop|uri|status|switchover|primary|crash NODE|destroy" >&2; exit 2 ;;
esac
