#!/usr/bin/env bash
# Runs an Azure Blob Storage emulator for gozarr's tests: Azurite's blob
# service (from npm), in memory, on 127.0.0.1 over plain HTTP, with its
# well-known development account.
#
#   eval "$(bash .ci/azurite.sh start)"   # install if missing, start, wait
#                                         # until ready, and print the
#                                         # GOZARR_AZURE_* exports
#   (cd store/azure && go test ./...)     # emulator tests now run, not skip
#   bash .ci/azurite.sh stop              # stop it and remove its files
#
# The tests create the container. `start` also writes the exports to
# $GOZARR_AZURE_STATE/env (default state dir /tmp/gozarr-azurite). Progress
# goes to stderr; only the export lines go to stdout. The npm install takes
# about 2.5 minutes the first time (into $GOZARR_AZURITE_PREFIX, default
# ~/.cache/gozarr/azurite), and nothing once installed.
set -euo pipefail

AZURITE_VERSION=${AZURITE_VERSION:-3.37.0}
PREFIX=${GOZARR_AZURITE_PREFIX:-$HOME/.cache/gozarr/azurite}
STATE=${GOZARR_AZURE_STATE:-/tmp/gozarr-azurite}
CONTAINER=${GOZARR_AZURE_CONTAINER:-gozarr}
# Azurite's documented development account and key (not a secret).
ACCOUNT=devstoreaccount1
KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

log() { echo "azurite: $*" >&2; }

install_azurite() {
	local bin="$PREFIX/node_modules/.bin/azurite-blob"
	if [ -x "$bin" ] && [ "$(cat "$PREFIX/.version" 2>/dev/null)" = "$AZURITE_VERSION" ]; then
		echo "$bin"
		return
	fi
	command -v npm >/dev/null 2>&1 || { log "npm not found"; exit 1; }
	log "installing azurite@$AZURITE_VERSION from npm into $PREFIX (minutes the first time)"
	mkdir -p "$PREFIX"
	npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >&2
	echo "$AZURITE_VERSION" >"$PREFIX/.version"
	echo "$bin"
}

exports() {
	cat <<EOV
export GOZARR_AZURE_ENDPOINT=http://127.0.0.1:$1/$ACCOUNT
export GOZARR_AZURE_ACCOUNT=$ACCOUNT
export GOZARR_AZURE_KEY='$KEY'
export GOZARR_AZURE_CONTAINER=$CONTAINER
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
	bin=$(install_azurite)
	rm -rf "$STATE"
	mkdir -p "$STATE"
	local try port pid i
	for try in 1 2 3 4 5; do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		if ss -ltn 2>/dev/null | grep -q ":$port "; then
			continue
		fi
		# In memory (at most 1 GiB of blob data); any API version the SDK
		# speaks; no telemetry.
		(cd "$STATE" && exec "$bin" --blobHost 127.0.0.1 --blobPort "$port" --inMemoryPersistence \
			--extentMemoryLimit 1024 --skipApiVersionCheck --disableTelemetry --silent) >"$STATE/log" 2>&1 &
		pid=$!
		for i in $(seq 1 300); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/$ACCOUNT?comp=list" || true)" != "000" ]; then
				echo "$pid" >"$STATE/pid"
				exports "$port" >"$STATE/env"
				log "azurite $AZURITE_VERSION on 127.0.0.1:$port (pid $pid), account $ACCOUNT"
				cat "$STATE/env"
				return
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		log "attempt $try on port $port failed: $(tail -3 "$STATE/log" 2>/dev/null)"
	done
	log "could not start azurite"
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
install) install_azurite >/dev/null ;;
*)
	echo "usage: $0 start|stop|install" >&2
	exit 2
	;;
esac
