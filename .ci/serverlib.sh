# Shared parts of .ci/gcsserver.sh and .ci/azurite.sh, which source this
# file after setting NAME (for messages) and STATE (the state directory):
# logging, the server's pid file, stopping it, and starting it on a free
# random port of 127.0.0.1 (serve).

log() { echo "$NAME: $*" >&2; }

gobin() {
	local d
	d=$(go env GOBIN)
	[ -n "$d" ] || d="$(go env GOPATH)/bin"
	echo "$d"
}

running() { [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; }

# already: when a server of this state directory runs, print its exports
# again and succeed.
already() {
	if running; then
		log "already running (pid $(cat "$STATE/pid"))"
		cat "$STATE/env"
		return 0
	fi
	return 1
}

# serve LAUNCH READY UP: up to five times, pick a random free port, run
# `LAUNCH PORT` in the background (it must exec the server, logging to
# stdout/stderr), and poll `READY PORT` for up to 30 s; once it succeeds,
# record the pid and run `UP PORT PID`, which prints the exports.
serve() {
	local launch=$1 ready=$2 up=$3 try port pid i
	rm -rf "$STATE"
	mkdir -p "$STATE"
	for try in 1 2 3 4 5; do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		if ss -ltn 2>/dev/null | grep -q ":$port "; then
			continue
		fi
		"$launch" "$port" >"$STATE/log" 2>&1 &
		pid=$!
		for i in $(seq 1 300); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if "$ready" "$port"; then
				echo "$pid" >"$STATE/pid"
				"$up" "$port" "$pid"
				return
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		log "attempt $try on port $port failed: $(tail -3 "$STATE/log" 2>/dev/null)"
	done
	log "could not start"
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

# dispatch ARG: the scripts' command line (start|stop|install).
dispatch() {
	case "${1:-}" in
	start) start ;;
	stop) stop ;;
	install) install_server >/dev/null ;;
	*)
		echo "usage: $0 start|stop|install" >&2
		exit 2
		;;
	esac
}
