# Shell functions shared by slurm-up, slurm-reconfigure and slurm-down (sourced, not run).
#
# Every daemon runs in the foreground of its own session (setsid), its output in
# $DIR/log/NAME.out and its PID in $DIR/pids/NAME.pid: stop_daemon stops exactly that process.
# The caller sets DIR and defines fail (what to do when a daemon does not come up).

say() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

# Start "$@" in the background as daemon $1 (which runs in the foreground), record its PID.
start() {
    local name=$1
    shift
    setsid "$@" >>"$DIR/log/$name.out" 2>&1 </dev/null &
    echo $! >"$DIR/pids/$name.pid"
}

# Wait up to $1 seconds for the command "${@:3}" to succeed; daemon $2 must stay alive meanwhile.
wait_for() {
    local seconds=$1 name=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if ! kill -0 "$(cat "$DIR/pids/$name.pid")" 2>/dev/null; then
            tail -n 30 "$DIR/log/$name".* >&2 || true
            fail "$name exited during start-up (logs in $DIR/log)"
        fi
        if ((SECONDS >= deadline)); then
            tail -n 30 "$DIR/log/$name".* >&2 || true
            fail "$name not ready after ${seconds}s (logs in $DIR/log)"
        fi
        sleep 0.5
    done
}

# Stop daemon $1 if its recorded process runs: SIGTERM, up to 15 s of grace, then SIGKILL.
stop_daemon() {
    local name=$1 file=$DIR/pids/$1.pid pid
    [[ -f $file ]] || return 0
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 30); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "$name ($pid) ignored SIGTERM; killing it"
            kill -KILL "$pid" 2>/dev/null
        fi
        say "stopped $name ($pid)"
    fi
    rm -f "$file"
}

# The cluster's node is idle (sinfo); $1 is its name.
node_idle() { [[ $(sinfo -h -N -n "$1" -o %T) == idle ]]; }
