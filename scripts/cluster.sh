#!/usr/bin/env bash
# A local cluster of thumbnail services behind nginx, with one command:
#
#   scripts/cluster.sh start --instances N --port P [--run-dir DIR] [--cache-dir DIR] [-- SERVE-FLAGS...]
#   scripts/cluster.sh status [--run-dir DIR]
#   scripts/cluster.sh stop [--run-dir DIR]
#
# start: N `image-engine serve` instances on 127.0.0.1:P+1 … P+N (metrics on P+1001 …), and
# nginx on P with deploy/nginx/image-engine.conf (the instances, port and cache directory filled
# in); returns when every instance and nginx answer /ready. It runs $IMAGE_ENGINE when set, else
# builds the release binary; installs nginx from apt when missing. --cache-dir DIR holds the
# instances' caches (DIR/instance-I) and nginx's (DIR/nginx); without it the instances cache in
# memory and nginx in the run directory. Without IMAGE_ENGINE_KEY/IMAGE_ENGINE_SALT in the
# environment (and no --unsafe among the serve flags) a key pair is generated and written to
# RUN/keys.env (mode 600 before the key is written) for `image-engine sign`.
#
# State — pid files, the generated nginx configuration (which nginx, possibly as root, runs),
# logs, keys — lives in the run directory: --run-dir DIR, else $IMAGE_ENGINE_CLUSTER_RUN, else a
# fresh `mktemp -d`. It is made with mode 700; one that exists must be a directory (not a link)
# owned by the user running the script and writable by nobody else, or start refuses it, so no
# other user can plant a configuration or read the keys. Everything runs under umask 077. start
# prints the run directory and records it (in ${XDG_STATE_HOME:-~/.local/state}/image-engine/,
# mode 700), so status and stop find the current run without arguments, with the same checks.
# stop stops exactly the processes whose pid files are there (SIGTERM, so instances drain;
# SIGKILL after their shutdown timeout) and leaves none behind. status prints `instance I pid
# PID port PORT ready|down` per instance and `nginx pid PID port P` (with `down` when it is not
# running), and exits 1 if anything is down.
set -euo pipefail
umask 077
root="$(cd "$(dirname "$0")/.." && pwd)"
state_dir="${XDG_STATE_HOME:-$HOME/.local/state}/image-engine"
run=""

usage() {
    echo "usage: scripts/cluster.sh start --instances N --port P [--run-dir DIR] [--cache-dir DIR] [-- SERVE-FLAGS...]" >&2
    echo "       scripts/cluster.sh status|stop [--run-dir DIR]" >&2
    exit 64
}

# Refuses DIR unless it is a real directory owned by this user that nobody else may write to.
check_run_dir() {
    local dir=$1 owner mode
    [[ -d "$dir" && ! -L "$dir" ]] || { echo "cluster.sh: $dir is not a directory" >&2; exit 1; }
    owner=$(stat -c %u "$dir")
    mode=$(stat -c %a "$dir")
    [[ "$owner" == "$(id -u)" ]] || { echo "cluster.sh: $dir belongs to uid $owner, not to you: refusing it" >&2; exit 1; }
    (( (8#$mode & 8#022) == 0 )) || { echo "cluster.sh: $dir (mode $mode) is writable by others: refusing it" >&2; exit 1; }
}

# The run directory for status and stop: --run-dir, $IMAGE_ENGINE_CLUSTER_RUN, or the one the
# last start recorded.
find_run_dir() {
    local given=${1:-${IMAGE_ENGINE_CLUSTER_RUN:-}}
    if [[ -z "$given" && -f "$state_dir/cluster-run" ]]; then
        check_run_dir "$state_dir"
        given=$(cat "$state_dir/cluster-run")
    fi
    [[ -n "$given" ]] || { echo "cluster.sh: no cluster started (no --run-dir, and none recorded)" >&2; return 1; }
    [[ -d "$given" ]] || { echo "no cluster in $given" >&2; return 1; }
    check_run_dir "$given"
    run=$(cd "$given" && pwd)
}

# Makes (mode 700) or checks the run directory for start.
make_run_dir() {
    local given=${1:-${IMAGE_ENGINE_CLUSTER_RUN:-}}
    if [[ -z "$given" ]]; then
        run=$(mktemp -d "${TMPDIR:-/tmp}/image-engine-cluster.XXXXXXXX")
    else
        [[ -e "$given" || -L "$given" ]] || mkdir -m 700 -p "$given"
        check_run_dir "$given"
        run=$(cd "$given" && pwd)
    fi
    mkdir -m 700 -p "$state_dir"
    check_run_dir "$state_dir"
    printf '%s\n' "$run" >"$state_dir/cluster-run"
}

# Parses `[--run-dir DIR]` for status and stop.
run_dir_option() {
    case "${1:-}" in
        "") echo "" ;;
        --run-dir) [[ -n "${2:-}" ]] || usage; echo "$2" ;;
        *) usage ;;
    esac
}

# True when PID runs and is the program we started (a pid file can outlive its process, and the
# number can be reused by another).
alive() {
    local pid=$1 program=$2
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$program"
}

ready() { curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:$1/ready"; }

status() {
    [[ -f "$run/cluster.env" ]] || { echo "no cluster in $run" >&2; return 1; }
    # shellcheck source=/dev/null
    source "$run/cluster.env"
    local down=0 i pid port
    for ((i = 1; i <= instances; i++)); do
        pid=$(cat "$run/instance-$i.pid" 2>/dev/null || true)
        port=$((nginx_port + i))
        if alive "$pid" "image-engine" && ready "$port"; then
            echo "instance $i pid $pid port $port ready"
        else
            echo "instance $i pid ${pid:--} port $port down"
            down=1
        fi
    done
    pid=$(cat "$run/nginx.pid" 2>/dev/null || true)
    if alive "$pid" "nginx"; then
        echo "nginx pid $pid port $nginx_port"
    else
        echo "nginx pid ${pid:--} port $nginx_port down"
        down=1
    fi
    return $down
}

# Stops PID (if it is still PROGRAM) with SIGNAL, then SIGKILL after GRACE seconds.
stop_process() {
    local pid=$1 program=$2 signal=$3 grace=$4
    alive "$pid" "$program" || return 0
    kill "-$signal" "$pid" 2>/dev/null || true
    local waited=0
    while alive "$pid" "$program" && ((waited < grace * 10)); do sleep 0.1; waited=$((waited + 1)); done
    if alive "$pid" "$program"; then
        echo "pid $pid did not stop in ${grace} s: killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
}

stop() {
    [[ -n "$run" && -d "$run" ]] || return 0
    local file
    # nginx first, so no new request reaches an instance that is going away.
    [[ -f "$run/nginx.pid" ]] && stop_process "$(cat "$run/nginx.pid")" nginx QUIT 10
    for file in "$run"/instance-*.pid; do
        [[ -f "$file" ]] && stop_process "$(cat "$file")" image-engine TERM 15
    done
    # (nginx's master exits only after its workers have.)
    rm -f "$run"/*.pid "$run/cluster.env"
    # The workers' own directory, if start made one: only a www-data-owned mktemp directory.
    if [[ -f "$run/nginx-workers-dir" ]]; then
        local workers_dir
        workers_dir=$(cat "$run/nginx-workers-dir")
        if [[ "$workers_dir" == "${TMPDIR:-/tmp}"/tmp.* && -d "$workers_dir" && ! -L "$workers_dir" \
            && "$(stat -c %U "$workers_dir")" == www-data ]]; then
            rm -rf "$workers_dir"
        fi
        rm -f "$run/nginx-workers-dir"
    fi
    echo "stopped the cluster in $run" >&2
}

start() {
    local instances="" port="" cache_dir="" run_dir=""
    while (($#)); do
        case "$1" in
            --instances) instances=${2:-}; shift 2 || usage ;;
            --port) port=${2:-}; shift 2 || usage ;;
            --run-dir) run_dir=${2:-}; shift 2 || usage ;;
            --cache-dir) cache_dir=${2:-}; shift 2 || usage ;;
            --) shift; break ;;
            *) echo "cluster.sh: unknown option $1" >&2; usage ;;
        esac
    done
    local serve_flags=("$@")
    [[ "$instances" =~ ^[1-9][0-9]*$ ]] || { echo "cluster.sh: --instances needs a positive number" >&2; usage; }
    [[ "$port" =~ ^[1-9][0-9]*$ ]] && ((port + instances + 1000 < 65536)) || { echo "cluster.sh: --port needs a port number" >&2; usage; }
    make_run_dir "$run_dir"
    if [[ -f "$run/cluster.env" ]] && status >/dev/null 2>&1; then
        echo "cluster.sh: a cluster is already running in $run (scripts/cluster.sh stop)" >&2
        exit 1
    fi
    stop >/dev/null 2>&1 || true

    command -v nginx >/dev/null || {
        echo "Installing nginx-light" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light >/dev/null
    }
    local binary="${IMAGE_ENGINE:-}"
    if [[ -z "$binary" ]]; then
        (cd "$root" && swift build -c release --product image-engine >&2)
        binary="$root/.build/release/image-engine"
    fi

    mkdir -p "$run/logs"
    local nginx_cache="$run/nginx-cache" nginx_temp="$run/nginx-temp"
    if [[ $(id -u) == 0 ]] && ! runuser -u www-data -- test -x "$run" 2>/dev/null; then
        # As root, nginx's workers drop to www-data, which cannot enter the private run
        # directory: their cache and temp files get a directory of their own (stop removes it).
        local workers_dir
        workers_dir=$(mktemp -d)
        chown www-data "$workers_dir"
        echo "$workers_dir" >"$run/nginx-workers-dir"
        nginx_cache="$workers_dir/cache"
        nginx_temp="$workers_dir/temp"
    fi
    if [[ -n "$cache_dir" ]]; then
        mkdir -p "$cache_dir"
        cache_dir="$(cd "$cache_dir" && pwd)"
        nginx_cache="$cache_dir/nginx"
        # As root, www-data must pass through it to nginx's part: others may enter it (never
        # list it); the instances' directories inside stay private (umask 077).
        if [[ $(id -u) == 0 ]]; then chmod o+x "$cache_dir"; fi
    fi
    mkdir -p "$nginx_cache" "$nginx_temp"

    if [[ -z "${IMAGE_ENGINE_KEY:-}" && " ${serve_flags[*]:-} " != *" --unsafe "* ]]; then
        IMAGE_ENGINE_KEY=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
        IMAGE_ENGINE_SALT=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
        # Created with mode 600 (and umask 077) before a key is written into it.
        rm -f "$run/keys.env"
        install -m 600 /dev/null "$run/keys.env"
        printf 'export IMAGE_ENGINE_KEY=%s IMAGE_ENGINE_SALT=%s\n' "$IMAGE_ENGINE_KEY" "$IMAGE_ENGINE_SALT" >>"$run/keys.env"
        export IMAGE_ENGINE_KEY IMAGE_ENGINE_SALT
        echo "generated a key pair: source $run/keys.env before image-engine sign" >&2
    fi
    printf 'instances=%d\nnginx_port=%d\n' "$instances" "$port" >"$run/cluster.env"

    local i instance_port
    for ((i = 1; i <= instances; i++)); do
        instance_port=$((port + i))
        local flags=(serve --bind "127.0.0.1:$instance_port" --metrics-bind "127.0.0.1:$((instance_port + 1000))")
        if [[ -n "$cache_dir" ]]; then flags+=(--cache-dir "$cache_dir/instance-$i"); fi
        # setsid: the instances are not the terminal's, so a ^C there does not reach them.
        setsid "$binary" "${flags[@]}" ${serve_flags[@]+"${serve_flags[@]}"} \
            >"$run/logs/instance-$i.log" 2>"$run/logs/instance-$i.err" </dev/null &
        echo $! >"$run/instance-$i.pid"
    done

    # The committed configuration with the instances, the port and the cache directory filled in.
    local servers=""
    for ((i = 1; i <= instances; i++)); do
        servers+="    server 127.0.0.1:$((port + i)) max_fails=2 fail_timeout=5s;\n"
    done
    awk -v servers="$servers" -v port="$port" -v cache="$nginx_cache" '
        /# BEGIN instances/ { print; printf "%s", servers; skipping = 1; next }
        /# END instances/ { skipping = 0 }
        skipping { next }
        /^proxy_cache_path / { sub(/\/var\/cache\/nginx\/image-engine/, cache) }
        /^    listen 8080;/ { sub(/8080/, "127.0.0.1:" port) }
        { print }
    ' "$root/deploy/nginx/image-engine.conf" >"$run/image-engine.conf"
    local user_line=""
    if [[ $(id -u) == 0 ]]; then
        # nginx's workers never run as root: they run as www-data, which must reach their cache
        # and temp directories, or nothing starts.
        chown -R www-data "$nginx_cache" "$nginx_temp"
        runuser -u www-data -- test -w "$nginx_cache" -a -w "$nginx_temp" 2>/dev/null || {
            echo "cluster.sh: nginx's workers (www-data) cannot write to $nginx_cache: give --cache-dir a directory they can reach" >&2
            stop
            exit 1
        }
        user_line="user www-data;"
    fi
    cat >"$run/nginx.conf" <<EOF
# Generated by scripts/cluster.sh: deploy/nginx/image-engine.conf for this cluster.
$user_line
worker_processes auto;
pid $run/nginx.pid;
error_log $run/logs/nginx-error.log warn;
events { worker_connections 4096; }
http {
    # The cache status last: load tests count HIT, MISS, STALE… from here.
    log_format cache '\$remote_addr [\$time_local] "\$request" \$status \$body_bytes_sent \$request_time \$upstream_cache_status';
    access_log $run/logs/nginx-access.log cache;
    client_body_temp_path $nginx_temp/body;
    proxy_temp_path $nginx_temp/proxy;
    fastcgi_temp_path $nginx_temp/fastcgi;
    uwsgi_temp_path $nginx_temp/uwsgi;
    scgi_temp_path $nginx_temp/scgi;
    include $run/image-engine.conf;
}
EOF
    nginx -t -q -c "$run/nginx.conf" -p "$run" 2>"$run/logs/nginx-test.err" || {
        cat "$run/logs/nginx-test.err" >&2; stop; exit 1
    }
    nginx -c "$run/nginx.conf" -p "$run" 2>>"$run/logs/nginx-error.log"

    # Ready: every instance answers /ready (or one died: say why and stop everything).
    local deadline=$((SECONDS + 60))
    for ((i = 1; i <= instances; i++)); do
        until ready $((port + i)); do
            if ! alive "$(cat "$run/instance-$i.pid")" image-engine; then
                echo "cluster.sh: instance $i exited:" >&2
                tail -n 5 "$run/logs/instance-$i.err" >&2
                stop; exit 1
            fi
            if ((SECONDS > deadline)); then echo "cluster.sh: instance $i not ready after 60 s" >&2; stop; exit 1; fi
            sleep 0.1
        done
    done
    until ready "$port"; do
        if ((SECONDS > deadline)); then echo "cluster.sh: nginx not ready after 60 s" >&2; stop; exit 1; fi
        sleep 0.1
    done
    echo "cluster: $instances instance(s) behind nginx on http://127.0.0.1:$port; run directory $run" >&2
    echo "$run"
}

case "${1:-}" in
    start) shift; start "$@" ;;
    stop) shift; option=$(run_dir_option "$@"); find_run_dir "$option" || exit 0; stop ;;
    status) shift; option=$(run_dir_option "$@"); find_run_dir "$option" || exit 1; status ;;
    *) usage ;;
esac
