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
NAME=azurite
. "$(dirname "$0")/serverlib.sh"

install_server() {
	local bin="$PREFIX/node_modules/.bin/azurite-blob"
	if [ ! -x "$bin" ] || [ "$(cat "$PREFIX/.version" 2>/dev/null)" != "$AZURITE_VERSION" ]; then
		command -v npm >/dev/null 2>&1 || { log "npm not found"; exit 1; }
		log "installing azurite@$AZURITE_VERSION from npm into $PREFIX (minutes the first time)"
		mkdir -p "$PREFIX"
		npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >&2
		echo "$AZURITE_VERSION" >"$PREFIX/.version"
	fi
	echo "$bin"
}

# In memory (at most 1 GiB of blob data); any API version the SDK speaks;
# no telemetry.
launch() {
	cd "$STATE"
	exec "$BIN" --blobHost 127.0.0.1 --blobPort "$1" --inMemoryPersistence \
		--extentMemoryLimit 1024 --skipApiVersionCheck --disableTelemetry --silent
}

ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/$ACCOUNT?comp=list" || true)" != "000" ]; }

up() {
	cat >"$STATE/env" <<EOV
export GOZARR_AZURE_ENDPOINT=http://127.0.0.1:$1/$ACCOUNT
export GOZARR_AZURE_ACCOUNT=$ACCOUNT
export GOZARR_AZURE_KEY='$KEY'
export GOZARR_AZURE_CONTAINER=$CONTAINER
EOV
	log "azurite $AZURITE_VERSION on 127.0.0.1:$1 (pid $2), account $ACCOUNT"
	cat "$STATE/env"
}

start() {
	already && return
	BIN=$(install_server)
	serve launch ready up
}

dispatch "$@"
