#!/usr/bin/env bash
# CI's smoke test of scripts/cluster.sh (a few seconds): one instance of the debug build behind
# nginx, a loopback origin serving SampleImages/; a signed thumbnail is a MISS, then a HIT with
# the same bytes, and the same path with ?1 and ?2 added is the same cache entry, its colons
# spelled %3A are answered but never stored; a signed URL that climbs over its own path with dot
# segments (however spelled) cannot take another URL's entry; Accept values are folded into one entry per format; a URL with exp: is never
# stored; status lists
# both processes; started as root, nginx's workers run as www-data; stop leaves none of them
# running; a run directory another user owns, or
# others may write to, is refused; keys.env is mode 600.
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${IMAGE_ENGINE:-$PWD/.build/debug/image-engine}"
export IMAGE_ENGINE="$binary"
run_dir="$(mktemp -d)"
work="$(mktemp -d)"
# As root, nginx's workers (www-data) must pass through $work to the cache directory in it.
if [[ $(id -u) == 0 ]]; then chmod 711 "$work"; fi
port=$((20000 + RANDOM % 20000))
origin_port=$((port + 2000))
origin_pid=""
cleanup() {
    scripts/cluster.sh stop --run-dir "$run_dir" >/dev/null 2>&1 || true
    [[ -n "$origin_pid" ]] && kill "$origin_pid" 2>/dev/null || true
    rm -rf "$run_dir" "$work"
}
trap cleanup EXIT
fail() { echo "cluster smoke test: $*" >&2; exit 1; }

# The origin, on a random port: if it exits (a port already taken does that) or does not serve
# the sample photos within 5 s, another port is tried. Once, from a fresh clone, the origin
# was gone right after the CLI tests (its stderr was discarded then; now it is in origin.log),
# and an unbounded wait for it hung the suite.
origin_ready() {
    for _ in $(seq 50); do
        kill -0 "$origin_pid" 2>/dev/null || return 1
        # A sample photo, so another server that holds the port does not pass for the origin.
        curl -fs -o /dev/null "http://127.0.0.1:$origin_port/Autumn.jpg" && kill -0 "$origin_pid" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
for attempt in 1 2 3 4 5; do
    (cd SampleImages && exec python3 -m http.server "$origin_port" --bind 127.0.0.1 >/dev/null 2>"$work/origin.log") &
    origin_pid=$!
    origin_ready && break
    kill "$origin_pid" 2>/dev/null || true
    (( attempt < 5 )) || fail "the origin did not start on 5 ports: $(tail -1 "$work/origin.log")"
    origin_port=$((port + 2000 + attempt))
done
# A run directory that is not the user's, or that others may write to, is refused before
# anything starts.
foreign="$work/foreign-run"
mkdir -m 700 "$foreign" && chown nobody "$foreign"
if scripts/cluster.sh start --instances 1 --port "$port" --run-dir "$foreign" 2>"$work/refused.err"; then fail "a run directory owned by nobody was accepted"; fi
grep -q "belongs to uid" "$work/refused.err" || fail "refusal: $(cat "$work/refused.err")"
mkdir -m 777 "$work/open-run"
if scripts/cluster.sh start --instances 1 --port "$port" --run-dir "$work/open-run" 2>"$work/refused.err"; then fail "a world-writable run directory was accepted"; fi
grep -q "writable by others" "$work/refused.err" || fail "refusal: $(cat "$work/refused.err")"

scripts/cluster.sh start --instances 1 --port "$port" --run-dir "$run_dir" --cache-dir "$work/cache" -- --allow-private-sources --auto-webp >/dev/null
[[ $(stat -c %a "$run_dir") == 700 && $(stat -c %a "$run_dir/keys.env") == 600 ]] || fail "run directory $(stat -c %a "$run_dir"), keys.env $(stat -c %a "$run_dir/keys.env")"
# shellcheck source=/dev/null
source "$run_dir/keys.env"

path=$("$binary" sign "http://127.0.0.1:$origin_port/Autumn.jpg" --options rs:fill:200:200 --ext jpg)
first=$(curl -s -o "$work/first.jpg" -D - "http://127.0.0.1:$port$path" | tr -d '\r')
second=$(curl -s -o "$work/second.jpg" -D - "http://127.0.0.1:$port$path" | tr -d '\r')
grep -q "^HTTP/1.1 200" <<<"$first" || fail "first request: $first"
grep -qi "^x-cache-status: MISS" <<<"$first" || fail "first request not a MISS: $first"
grep -qi "^x-cache-status: HIT" <<<"$second" || fail "second request not a HIT: $second"
cmp -s "$work/first.jpg" "$work/second.jpg" || fail "the cached copy differs"
# A query string is not part of the key: ?1 and ?2 are the same entry, answered from the cache.
for query in 1 2; do
    reply=$(curl -s -o /dev/null -D - "http://127.0.0.1:$port$path?$query" | tr -d '\r')
    grep -qi "^x-cache-status: HIT" <<<"$reply" || fail "?$query was not a HIT: $reply"
done
# Other spellings of the same signed path (colons as %3A or %3a, as clients and proxies write
# them) verify and are answered, but `private`: nginx keys on the raw path, and stores none of
# them, so they never add an entry.
for spelling in "${path//:/%3A}" "${path//:/%3a}"; do
    reply=$(curl -s -o /dev/null -D - "http://127.0.0.1:$port$spelling" | tr -d '\r')
    grep -q "^HTTP/1.1 200" <<<"$reply" && grep -qi "^x-cache-status: MISS" <<<"$reply" || fail "$spelling: $reply"
done
entries=$(find "$work/cache/nginx" -type f | wc -l)
[[ "$entries" == 1 ]] || fail "nginx holds $entries cache entries for one thumbnail"
# Cache poisoning through dot segments: an attacker's signed URL whose plain source climbs back
# over its own path to another signed URL (the victim's). nginx would key it as the victim's
# path if it keyed on $uri; the service refuses it (400) before its signature, in every
# spelling (curl --path-as-is sends it unresolved), and the victim is served its own image.
victim=$("$binary" sign "http://127.0.0.1:$origin_port/Bridge.jpg" --options rs:fill:150:150 --ext jpg)
signed_by_attacker() {
    python3 -c 'import base64,hashlib,hmac,os,sys
mac = hmac.new(bytes.fromhex(os.environ["IMAGE_ENGINE_KEY"]), bytes.fromhex(os.environ["IMAGE_ENGINE_SALT"]) + sys.argv[1].encode(), hashlib.sha256)
print("/" + base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=") + sys.argv[1])' "$1"
}
# Six: back over the attacker's own segments (nginx merges the source's `//`) to the root, where
# nginx's $uri would begin with the victim's path (more would climb past the root, which nginx
# refuses itself).
climb="../../../../../.."
for spelling in "$climb" "${climb//\//%2F}" "${climb//../%2E%2E}" "${climb//../%2e.}"; do
    attack=$(IMAGE_ENGINE_KEY=$IMAGE_ENGINE_KEY IMAGE_ENGINE_SALT=$IMAGE_ENGINE_SALT signed_by_attacker \
        "/rs:fill:150:150/plain/http://127.0.0.1:$origin_port/x/$spelling$victim")
    reply=$(curl -s --path-as-is -o "$work/attack.out" -D - "http://127.0.0.1:$port$attack" | tr -d '\r')
    grep -q "^HTTP/1.1 400" <<<"$reply" || fail "a dot-segment path was not refused ($spelling): $reply"
    grep -q "segment" "$work/attack.out" || fail "the refusal does not say why: $(cat "$work/attack.out")"
done
victim_reply=$(curl -s -o "$work/victim.jpg" -D - "http://127.0.0.1:$port$victim" | tr -d '\r')
grep -qi "^x-cache-status: MISS" <<<"$victim_reply" || fail "the victim's URL was already cached: $victim_reply"
curl -s -o "$work/victim-direct.jpg" "http://127.0.0.1:$((port + 1))$victim"
cmp -s "$work/victim.jpg" "$work/victim-direct.jpg" || fail "the victim's URL did not serve the victim's image"
# Accept is folded into the format the service chooses (--auto-webp): two raw values that both
# take WebP are one entry, a refusal of WebP (q=0) is the JPEG's.
negotiated=$("$binary" sign "http://127.0.0.1:$origin_port/Autumn.jpg" --options rs:fill:120:120)
ask() { curl -s -o /dev/null -D - -H "Accept: $1" "http://127.0.0.1:$port$negotiated" | tr -d '\r'; }
webp_first=$(ask "image/webp,*/*")
webp_second=$(ask "text/html, image/avif;q=0, image/webp;q=0.8")
no_webp=$(ask "image/webp;q=0, image/jpeg")
no_webp_again=$(ask "*/*")
grep -qi "^content-type: image/webp" <<<"$webp_first" && grep -qi "^x-cache-status: MISS" <<<"$webp_first" || fail "WebP: $webp_first"
grep -qi "^content-type: image/webp" <<<"$webp_second" && grep -qi "^x-cache-status: HIT" <<<"$webp_second" || fail "WebP again: $webp_second"
grep -qi "^content-type: image/jpeg" <<<"$no_webp" && grep -qi "^x-cache-status: MISS" <<<"$no_webp" || fail "WebP refused: $no_webp"
grep -qi "^content-type: image/jpeg" <<<"$no_webp_again" && grep -qi "^x-cache-status: HIT" <<<"$no_webp_again" || fail "no WebP: $no_webp_again"
grep -qi "^vary: Accept" <<<"$webp_first" || fail "no Vary: Accept for browsers and CDNs: $webp_first"
# A URL that expires is never stored: nginx's stale copy would answer after the service's 410.
expiring=$("$binary" sign "http://127.0.0.1:$origin_port/Autumn.jpg" --options "rs:fill:100:100/exp:$(( $(date +%s) + 3600 ))" --ext jpg)
for _ in 1 2; do
    reply=$(curl -s -o /dev/null -D - "http://127.0.0.1:$port$expiring" | tr -d '\r')
    grep -q "^HTTP/1.1 200" <<<"$reply" && grep -qi "^x-cache-status: BYPASS" <<<"$reply" || fail "an expiring URL: $reply"
    max_age=$(sed -n 's/^[Cc]ache-[Cc]ontrol: public, max-age=\([0-9]*\)$/\1/p' <<<"$reply")
    [[ -n "$max_age" && "$max_age" -le 3600 ]] || fail "an expiring URL's max-age: $reply"
done
entries=$(find "$work/cache/nginx" -type f | wc -l)
[[ "$entries" == 4 ]] || fail "nginx holds $entries cache entries for two JPEG thumbnails and another in JPEG and WebP"
info=$("$binary" inspect "$work/first.jpg")
grep -q '"format":"jpeg"' <<<"$info" && grep -q '"width":200' <<<"$info" && grep -q '"height":200' <<<"$info" || fail "not a 200×200 JPEG: $("$binary" inspect "$work/first.jpg")"
curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$port/bad-signature/rs:fit:10:10/plain/x" | grep -q 403 || fail "a bad signature was not 403"

# status and stop find the run start recorded, without arguments.
status=$(scripts/cluster.sh status) || fail "status says something is down: $status"
grep -q "^instance 1 pid [0-9]* port $((port + 1)) ready$" <<<"$status" || fail "status: $status"
grep -q "^nginx pid [0-9]* port $port$" <<<"$status" || fail "status: $status"
pids=$(grep -o "pid [0-9]*" <<<"$status" | cut -d' ' -f2)
if [[ $(id -u) == 0 ]]; then
    # Started as root, nginx's workers still never run as root.
    nginx_pid=$(sed -n 's/^nginx pid \([0-9]*\) .*/\1/p' <<<"$status")
    workers=$(ps -o user= --ppid "$nginx_pid" | sort -u | tr '\n' ' ')
    [[ "$workers" == "www-data " ]] || fail "nginx's workers run as: $workers"
    workers_dir=$(cat "$run_dir/nginx-workers-dir" 2>/dev/null || true)
fi
scripts/cluster.sh stop 2>/dev/null
[[ -z "${workers_dir:-}" || ! -e "$workers_dir" ]] || fail "stop left nginx's workers' directory $workers_dir"
for pid in $pids; do
    [[ -z "$(tr -d '\0' <"/proc/$pid/cmdline" 2>/dev/null)" ]] || fail "pid $pid still runs after stop"
done
if scripts/cluster.sh status >/dev/null 2>&1; then fail "status exits 0 after stop"; fi
if scripts/cluster.sh status --run-dir "$run_dir" >/dev/null 2>&1; then fail "status --run-dir exits 0 after stop"; fi
echo "cluster smoke test: MISS then HIT through nginx, status, stop: ok" >&2
