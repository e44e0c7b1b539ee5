#!/usr/bin/env bash
# Starts or stops a PostgreSQL cluster of its own in DIR, for trying
# several paddock replicas on one machine: no system service, no other
# cluster touched.
#
#   scripts/postgres.sh start DIR [PORT]   # prints the DSN for paddock serve --database
#   scripts/postgres.sh stop DIR
#
# start makes the cluster in DIR/data on its first run (user postgres, no
# password, trust on loopback only), starts it on 127.0.0.1:PORT (default
# 5432) with its socket in DIR, creates the database "paddock" and prints
# postgres://postgres@127.0.0.1:PORT/paddock?sslmode=disable. Run again on
# a running cluster it only prints the DSN, with the port the cluster runs
# on. stop stops it (fast shutdown); the data stays in DIR for the next
# start.
#
# PostgreSQL's server binaries come from Debian's postgresql package
# (scripts/setup-host.sh installs it). Run as root, the cluster runs as the
# postgres user, which must be able to reach DIR.
set -euo pipefail

usage() {
	echo "usage: $0 start DIR [PORT] | stop DIR" >&2
	exit 2
}
[ $# -ge 2 ] || usage
cmd=$1 dir=$2 port=${3:-5432}
[ "$cmd" = start ] && mkdir -p "$dir"
dir=$(cd "$dir" 2>/dev/null && pwd) || {
	echo "postgres.sh: no directory $2" >&2
	exit 1
}

# The newest installed PostgreSQL's binaries.
bin=
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5n); do
	[ -x "$d/initdb" ] && bin=$d
done
if [ -z "$bin" ] && command -v initdb >/dev/null 2>&1; then
	bin=$(dirname "$(command -v initdb)")
fi
if [ -z "$bin" ]; then
	echo "postgres.sh: PostgreSQL is not installed: run scripts/setup-host.sh (or apt-get install postgresql)" >&2
	exit 1
fi

# as_pg runs a PostgreSQL program as its user (initdb and the server
# refuse to run as root), in DIR: a program run as postgres may not be
# able to read the directory it was started in.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		(cd "$dir" && runuser -u postgres -- "$@")
	else
		(cd "$dir" && "$@")
	fi
}

running() {
	as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

start() {
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir"
	fi
	if [ ! -s "$dir/data/PG_VERSION" ]; then
		as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C --no-instructions >"$dir/initdb.log" 2>&1 || {
			echo "postgres.sh: initdb failed; its output:" >&2
			cat "$dir/initdb.log" >&2
			exit 1
		}
	fi
	if running; then
		port=$(sed -n 4p "$dir/data/postmaster.pid")
	elif ! as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null; then
		echo "postgres.sh: the server did not start; its log:" >&2
		tail -n 20 "$dir/postgres.log" >&2
		exit 1
	fi
	psql=("$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA)
	if [ -z "$(as_pg "${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'paddock'")" ]; then
		as_pg "${psql[@]}" -c "CREATE DATABASE paddock" >/dev/null
	fi
	echo "postgres://postgres@127.0.0.1:$port/paddock?sslmode=disable"
}

stop() {
	if [ ! -s "$dir/data/PG_VERSION" ]; then
		echo "postgres.sh: no cluster in $dir" >&2
		exit 1
	fi
	if running; then
		as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	fi
}

case "$cmd" in
start) start ;;
stop)
	[ $# -eq 2 ] || usage
	stop
	;;
*) usage ;;
esac
