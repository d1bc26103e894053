#!/usr/bin/env bash
# Runs a real S3 server for gozarr's tests: Versity's S3 gateway (versitygw)
# with its posix backend in a temporary directory, on 127.0.0.1, with static
# keys, and one bucket.
#
#   eval "$(bash .ci/s3server.sh start)"   # install if missing, start, create
#                                          # the bucket, wait until ready, and
#                                          # print the GOZARR_S3_* exports
#   go test ./store/s3/...                 # real-S3 tests now run, not skip
#   bash .ci/s3server.sh stop              # stop it and remove its files
#
# `start` also writes the exports to $GOZARR_S3_STATE/env (default state dir
# /tmp/gozarr-s3), so later shells can `source /tmp/gozarr-s3/env`. Calling
# `start` while a server from the same state dir runs prints its exports
# again. Progress goes to stderr; only the export lines go to stdout.
set -euo pipefail

VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.8.0}
STATE=${GOZARR_S3_STATE:-/tmp/gozarr-s3}
ACCESS=${GOZARR_S3_ACCESS_KEY:-gozarrtest}
SECRET=${GOZARR_S3_SECRET_KEY:-gozarrtestsecret}
BUCKET=${GOZARR_S3_BUCKET:-gozarr}
REGION=us-east-1

log() { echo "s3server: $*" >&2; }

gobin() {
	local d
	d=$(go env GOBIN)
	[ -n "$d" ] || d="$(go env GOPATH)/bin"
	echo "$d"
}

install_gw() {
	local bin
	bin="$(gobin)/versitygw"
	if [ -x "$bin" ]; then
		echo "$bin"
		return
	fi
	if command -v versitygw >/dev/null 2>&1; then
		command -v versitygw
		return
	fi
	log "installing github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION (takes a few minutes the first time)"
	go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" >&2
	echo "$bin"
}

exports() {
	cat <<EOF
export GOZARR_S3_ENDPOINT=http://127.0.0.1:$1
export GOZARR_S3_ACCESS_KEY=$ACCESS
export GOZARR_S3_SECRET_KEY=$SECRET
export GOZARR_S3_BUCKET=$BUCKET
export GOZARR_S3_REGION=$REGION
EOF
}

running() { [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; }

# s3curl METHOD URL: a SigV4-signed request with an empty body; prints the
# HTTP status.
s3curl() {
	curl -s -o /dev/null -w '%{http_code}' -X "$1" \
		-H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
		--aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS:$SECRET" "$2" || true
}

start() {
	if running; then
		log "already running (pid $(cat "$STATE/pid"))"
		cat "$STATE/env"
		return
	fi
	local bin
	bin=$(install_gw)
	rm -rf "$STATE"
	mkdir -p "$STATE/root"
	local try port pid
	for try in 1 2 3 4 5; do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		if ss -ltn 2>/dev/null | grep -q ":$port "; then
			continue
		fi
		# --keep-alive: let clients reuse connections, as S3 does.
		# VGW_POSIX_IO_BUFFER_SIZE: its default 1 MiB read buffer, allocated
		# per ranged GET, is half of its CPU cost for small ranges.
		VGW_POSIX_IO_BUFFER_SIZE=65536 "$bin" --port "127.0.0.1:$port" --access "$ACCESS" --secret "$SECRET" \
			--region "$REGION" --keep-alive --quiet \
			posix "$STATE/root" >"$STATE/log" 2>&1 &
		pid=$!
		local i
		for i in $(seq 1 100); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/" || true)" != "000" ]; then
				echo "$pid" >"$STATE/pid"
				local st
				st=$(s3curl PUT "http://127.0.0.1:$port/$BUCKET")
				if [ "$st" != 200 ]; then
					log "creating bucket $BUCKET: HTTP $st"
					kill "$pid"
					exit 1
				fi
				exports "$port" >"$STATE/env"
				log "versitygw $VERSITYGW_VERSION on 127.0.0.1:$port (pid $pid), bucket $BUCKET, data in $STATE/root"
				cat "$STATE/env"
				return
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		log "attempt $try on port $port failed: $(tail -3 "$STATE/log" 2>/dev/null)"
	done
	log "could not start versitygw"
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
install) install_gw >/dev/null ;;
*)
	echo "usage: $0 start|stop|install" >&2
	exit 2
	;;
esac
