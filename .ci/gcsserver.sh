#!/usr/bin/env bash
# Runs a Google Cloud Storage emulator for gozarr's tests: fake-gcs-server
# (installed from the Go module proxy with `go install`), in memory, on
# 127.0.0.1 over plain HTTP, with one bucket.
#
#   eval "$(bash .ci/gcsserver.sh start)"   # install if missing, start, create
#                                           # the bucket, wait until ready, and
#                                           # print the GOZARR_GCS_* exports
#   (cd store/gcs && go test ./...)         # emulator tests now run, not skip
#   bash .ci/gcsserver.sh stop              # stop it and remove its files
#
# `start` also writes the exports to $GOZARR_GCS_STATE/env (default state
# dir /tmp/gozarr-gcs). Progress goes to stderr; only the export lines go to
# stdout. The first install builds the server from source: about 6 minutes
# on a cold module cache with 2 busy cores, seconds once built.
set -euo pipefail

FAKEGCS_VERSION=${FAKEGCS_VERSION:-v1.56.1}
STATE=${GOZARR_GCS_STATE:-/tmp/gozarr-gcs}
BUCKET=${GOZARR_GCS_BUCKET:-gozarr}

log() { echo "gcsserver: $*" >&2; }

gobin() {
	local d
	d=$(go env GOBIN)
	[ -n "$d" ] || d="$(go env GOPATH)/bin"
	echo "$d"
}

install_server() {
	local bin
	bin="$(gobin)/fake-gcs-server"
	if [ -x "$bin" ]; then
		echo "$bin"
		return
	fi
	log "installing github.com/fsouza/fake-gcs-server@$FAKEGCS_VERSION (takes minutes the first time)"
	go install "github.com/fsouza/fake-gcs-server@$FAKEGCS_VERSION" >&2
	echo "$bin"
}

exports() {
	cat <<EOV
export GOZARR_GCS_ENDPOINT=http://127.0.0.1:$1
export GOZARR_GCS_BUCKET=$BUCKET
EOV
}

running() { [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; }

start() {
	if running; then
		log "already running (pid $(cat "$STATE/pid"))"
		cat "$STATE/env"
		return
	fi
	local bin
	bin=$(install_server)
	rm -rf "$STATE"
	mkdir -p "$STATE"
	local try port pid i st
	for try in 1 2 3 4 5; do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		if ss -ltn 2>/dev/null | grep -q ":$port "; then
			continue
		fi
		"$bin" -scheme http -host 127.0.0.1 -port "$port" -public-host "127.0.0.1:$port" \
			-external-url "http://127.0.0.1:$port" -backend memory -log-level warn >"$STATE/log" 2>&1 &
		pid=$!
		for i in $(seq 1 100); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/storage/v1/b" || true)" = 200 ]; then
				echo "$pid" >"$STATE/pid"
				st=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
					-d "{\"name\":\"$BUCKET\"}" "http://127.0.0.1:$port/storage/v1/b?project=gozarr" || true)
				if [ "$st" != 200 ]; then
					log "creating bucket $BUCKET: HTTP $st"
					kill "$pid"
					exit 1
				fi
				exports "$port" >"$STATE/env"
				log "fake-gcs-server $FAKEGCS_VERSION on 127.0.0.1:$port (pid $pid), bucket $BUCKET"
				cat "$STATE/env"
				return
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		log "attempt $try on port $port failed: $(tail -3 "$STATE/log" 2>/dev/null)"
	done
	log "could not start fake-gcs-server"
	exit 1
}

stop() {
	if running; then
		local pid
		pid=$(cat "$STATE/pid")
		kill "$pid"
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		log "stopped pid $pid"
	fi
	rm -rf "$STATE"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
install) install_server >/dev/null ;;
*)
	echo "usage: $0 start|stop|install" >&2
	exit 2
	;;
esac
