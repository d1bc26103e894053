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
NAME=gcsserver
. "$(dirname "$0")/serverlib.sh"

install_server() {
	local bin
	bin="$(gobin)/fake-gcs-server"
	if [ ! -x "$bin" ]; then
		log "installing github.com/fsouza/fake-gcs-server@$FAKEGCS_VERSION (takes minutes the first time)"
		go install "github.com/fsouza/fake-gcs-server@$FAKEGCS_VERSION" >&2
	fi
	echo "$bin"
}

launch() {
	exec "$BIN" -scheme http -host 127.0.0.1 -port "$1" -public-host "127.0.0.1:$1" \
		-external-url "http://127.0.0.1:$1" -backend memory -log-level warn
}

ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/storage/v1/b" || true)" = 200 ]; }

up() {
	local st
	st=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-d "{\"name\":\"$BUCKET\"}" "http://127.0.0.1:$1/storage/v1/b?project=gozarr" || true)
	if [ "$st" != 200 ]; then
		log "creating bucket $BUCKET: HTTP $st"
		kill "$2"
		exit 1
	fi
	cat >"$STATE/env" <<EOV
export GOZARR_GCS_ENDPOINT=http://127.0.0.1:$1
export GOZARR_GCS_BUCKET=$BUCKET
EOV
	log "fake-gcs-server $FAKEGCS_VERSION on 127.0.0.1:$1 (pid $2), bucket $BUCKET"
	cat "$STATE/env"
}

start() {
	already && return
	BIN=$(install_server)
	serve launch ready up
}

dispatch "$@"
