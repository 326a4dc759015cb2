#!/usr/bin/env bash
# Builds the repository's Dockerfile, unchanged, with podman and runs the commands
# docs/deploy.md "The Docker way" documents; exits non-zero, with the container's logs, at the
# first that does not work. Run as root on a Debian bookworm machine (CI: .ci/run):
#   apt-get install podman runc debootstrap   then   deploy/container/test-image.sh
#
# No registry is needed: the Dockerfile's FROM images (node:20-bookworm, node:20-bookworm-slim)
# are stood in for by one image built here with debootstrap (Debian bookworm from the mirror apt
# uses) plus this machine's own Node 20 (node and npm, as in the real images: /usr/local, user
# `node` uid 1000). When this machine trusts extra CAs for npm (NODE_EXTRA_CA_CERTS, e.g. a TLS
# proxy in front of the registry), the stand-in trusts them too: the Dockerfile stays as users
# build it. Everything (podman's storage, the rootfs) is in one temp folder, removed at the end.
#
# Checks: (0) the repository's conf/daemon.yaml (journal beside it) mounted read-only at
# /etc/cod is refused by `cod check-config` and by the daemon, both naming EROFS; (a) the image
# alone on a bridge network with -p: /healthz and a call_user through the published port, the
# journal in /var/lib/cod, `podman healthcheck run`; (b) a configuration mounted read-only
# (http.port 9090: the health check follows it) with a state volume: check-config, the same
# calls, the journal in the volume; (d) each stops on SIGTERM (`podman stop`) with exit 0,
# within 10 s, logging its shutdown.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
started=$SECONDS
work=$(mktemp -d /tmp/cod-image-test.XXXXXX)
image=localhost/cod-image-test:latest
containers=()

say() { printf '[test-image %3ds] %s\n' $((SECONDS - started)) "$*"; }

# podman on storage, run state and settings of its own, all in $work.
pm_cmd=(env CONTAINERS_CONF="$work/containers.conf" podman --root "$work/storage" --runroot "$work/run")
pm() { "${pm_cmd[@]}" "$@"; }

# podman writes two small things outside --root whatever it is told: its blob-info cache
# (/var/lib/containers/cache) and netavark's address allocations (/run/containers/networks).
# Removed at the end when they were not there before (a podman in use here keeps its own).
created_outside=()
for p in /var/lib/containers /run/containers; do [ -e "$p" ] || created_outside+=("$p"); done

cleanup() {
  set +e
  if [ -d "$work/storage" ]; then
    pm rm --all --force --time 0 >/dev/null 2>&1
    pm volume prune --force >/dev/null 2>&1
    pm rmi --all --force >/dev/null 2>&1
  fi
  # Whatever podman left mounted under $work (overlay layers), deepest first.
  awk -v w="$work" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf --one-file-system "$work"
  for p in "${created_outside[@]}"; do rm -rf --one-file-system "$p"; done
}
trap cleanup EXIT

fail() {
  echo "FAILED: $*" >&2
  for c in "${containers[@]}"; do
    echo "---- podman logs $c ----" >&2
    pm logs "$c" >&2 2>&1 || true
  done
  exit 1
}

# ---- podman's settings: runc, no systemd, limits within this machine's hard limits ----
# Rootful podman asks for 1048576 open files and processes by default, which runc cannot set
# above the hard limits it inherits (EPERM). podman lowers its own process limit to
# kernel.pid_max, so that is the ceiling for nproc.
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
pid_max=$(cat /proc/sys/kernel/pid_max)
[ "$nofile" = unlimited ] && nofile=1048576
{ [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; } && nproc=$pid_max
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
log_driver = "k8s-file"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$work/events.log"
[network]
network_config_dir = "$work/networks"
EOF

# ---- the stand-in base image ----
# The first Debian mirror apt uses here (deb822 "URIs:" or a one-line "deb" entry), not security.
mirror=$(grep -hoE '^(URIs:[[:space:]]*|deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)[a-z]+://[^[:space:]]+' \
  /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
  grep -oE '[a-z]+://[^[:space:]]+' | grep -v security | head -n 1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
say "debootstrap bookworm (minbase) from $mirror"
rootfs="$work/rootfs"
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 30 "$work/debootstrap.log" >&2; fail "debootstrap"; }

node_bin=$(command -v node)
node_major=$("$node_bin" -p 'process.versions.node.split(".")[0]')
[ "$node_major" = 20 ] || fail "this machine's node is $("$node_bin" --version), the Dockerfile's images have Node 20"
npm_dir="$(npm root -g)/npm"
[ -f "$npm_dir/bin/npm-cli.js" ] || fail "npm not found at $npm_dir"
install -D -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/lib/node_modules"
cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["node"]')
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  install -D -m 0644 "$NODE_EXTRA_CA_CERTS" "$rootfs/usr/local/share/host-ca/ca.crt"
  changes+=(--change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/host-ca/ca.crt')
fi
say "importing it as node:20-bookworm and node:20-bookworm-slim (node $("$node_bin" --version))"
tar -C "$rootfs" -c . | pm import --quiet "${changes[@]}" - docker.io/library/node:20-bookworm >/dev/null
pm tag docker.io/library/node:20-bookworm docker.io/library/node:20-bookworm-slim
rm -rf "$rootfs"

# ---- the image, from the Dockerfile as it is ----
say "podman build --format docker (the Dockerfile unchanged)"
pm build --format docker --pull=never -t "$image" -f "$repo/Dockerfile" "$repo" >"$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log" >&2; fail "podman build"; }
[ "$(pm image inspect --format '{{.Config.Healthcheck.Test}}' "$image")" != '[]' ] || fail "the image has no HEALTHCHECK"

# ---- helpers for the runs ----
running() { [ "$(pm inspect --format '{{.State.Running}}' "$1" 2>/dev/null)" = true ]; }

# Waits until the image's own health check passes (what `podman healthcheck run` runs).
await_healthy() {
  local c=$1 deadline=$((SECONDS + 60))
  until pm healthcheck run "$c" >/dev/null 2>&1; do
    running "$c" || fail "$c exited (code $(pm inspect --format '{{.State.ExitCode}}' "$c")) before it was healthy"
    [ $SECONDS -lt $deadline ] || fail "$c: podman healthcheck run still failing after 60 s"
    sleep 1
  done
}

# Starts container $1 in the background (podman run -d with the rest). Without systemd, podman
# cannot schedule the image's periodic health check and says so on stderr: harmless here, since
# the checks run it themselves (podman healthcheck run); shown only when the start fails.
start() {
  local c=$1 out
  shift
  containers+=("$c")
  out=$(pm run -d --name "$c" "$@" 2>&1) || fail "podman run $c: $out"
}

# http://127.0.0.1:<host port> published for the container's port $2.
published() { echo "http://$(pm port "$1" "$2/tcp" | head -n 1)"; }

# /healthz 200 and a call_user alice->bob (simulator) 200 with uuids, from this host.
check_api() {
  local c=$1 base=$2 code body
  code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 "$base/healthz") || fail "$c: $base/healthz unreachable"
  [ "$code" = 200 ] || fail "$c: $base/healthz answered $code"
  body=$(curl -sS --max-time 20 -w '\n%{http_code}' -u example.test:demo-token-example-test \
    -H 'content-type: application/json' -d '{"user_name":"alice","destination":"bob"}' "$base/api/call_user") ||
    fail "$c: call_user unreachable"
  [ "$(tail -n 1 <<<"$body")" = 200 ] || fail "$c: call_user answered: $body"
  grep -qE '"uuids":\["[0-9a-f-]{36}"' <<<"$body" || fail "$c: call_user without uuids: $body"
  say "$c: /healthz 200, call_user 200 $(head -n 1 <<<"$body")"
}

# SIGTERM (podman stop): exit 0 within 10 s (the stop timeout), the shutdown logged.
check_stop() {
  local c=$1 t0=$SECONDS code out
  # (stderr: podman's complaint about the systemd timer of the health check, as at the start.)
  out=$(pm stop --time 10 "$c" 2>&1) || fail "podman stop $c: $out"
  code=$(pm inspect --format '{{.State.ExitCode}}' "$c")
  [ "$code" = 0 ] || fail "$c: exit code $code after podman stop"
  [ $((SECONDS - t0)) -lt 10 ] || fail "$c: stopped only after $((SECONDS - t0)) s (SIGKILL at 10 s)"
  # Read whole, then searched: with pipefail, `pm logs | grep -q` fails when grep stops reading
  # at the first match and podman, still writing, dies of SIGPIPE (CI saw it: stop 33).
  out=$(pm logs "$c" 2>&1)
  grep -q '"msg":"shutdown requested"' <<<"$out" || fail "$c: no shutdown in its log"
  say "$c: podman stop: exit 0 in $((SECONDS - t0)) s, shutdown logged"
}

# ---- (0) the journal beside a read-only configuration: refused, naming the real reason ----
ro_conf="$work/conf-repo"
mkdir -p "$ro_conf"
cp "$repo/conf/daemon.yaml" "$ro_conf/"
cp -r "$repo/conf/domains" "$ro_conf/domains"
out=$(pm run --rm --no-healthcheck -v "$ro_conf:/etc/cod:ro" "$image" node dist/cli/cod.js check-config /etc/cod/daemon.yaml 2>&1) &&
  fail "check-config accepted a journal folder on a read-only /etc/cod: $out"
grep -q 'journal.dir: /etc/cod/journal cannot be created: /etc/cod is on a read-only file system (EROFS)' <<<"$out" ||
  fail "check-config on a read-only /etc/cod said: $out"
out=$(timeout 60 "${pm_cmd[@]}" run --rm --no-healthcheck -v "$ro_conf:/etc/cod:ro" "$image" 2>&1) && fail "the daemon started with its journal on a read-only /etc/cod"
grep -q 'journal folder /etc/cod/journal: cannot be created: /etc/cod is on a read-only file system (EROFS)' <<<"$out" ||
  fail "the daemon's refusal on a read-only /etc/cod: $out"
say "(0) journal beside a read-only /etc/cod: check-config and the daemon refuse it, naming EROFS"

# ---- (a) the image alone: docker run -p 8080:8080 cod (any free host port here) ----
start cod-alone --network bridge -p 127.0.0.1::8080 "$image"
await_healthy cod-alone
say "(a) cod-alone: podman healthcheck run passes"
check_api cod-alone "$(published cod-alone 8080)"
listing=$(pm exec cod-alone sh -c 'ls /var/lib/cod/journal')
grep -q '^segment-' <<<"$listing" || fail "cod-alone: no journal segment in /var/lib/cod/journal"
check_stop cod-alone

# ---- (b) a configuration mounted read-only, state in a volume ----
conf="$work/srv-cod"
mkdir -p "$conf"
sed 's/port: 8080,/port: 9090,/' "$repo/conf/image/daemon.yaml" >"$conf/daemon.yaml"
grep -q 'port: 9090' "$conf/daemon.yaml" || fail "could not set http.port 9090 in a copy of conf/image/daemon.yaml"
cp -r "$repo/conf/domains" "$conf/domains"
chmod -R a+rX "$conf"
mounts=(-v "$conf:/etc/cod:ro" -v cod-state:/var/lib/cod)
out=$(pm run --rm --no-healthcheck "${mounts[@]}" "$image" node dist/cli/cod.js check-config /etc/cod/daemon.yaml 2>&1) ||
  fail "check-config of the mounted configuration: $out"
say "(b) check-config /etc/cod/daemon.yaml (read-only mount, state volume): $out"
start cod-mounted "${mounts[@]}" --network bridge -p 127.0.0.1::9090 "$image"
await_healthy cod-mounted
say "(b) cod-mounted: podman healthcheck run passes on http.port 9090"
check_api cod-mounted "$(published cod-mounted 9090)"
check_stop cod-mounted
listing=$(pm run --rm --no-healthcheck -v cod-state:/var/lib/cod "$image" ls /var/lib/cod/journal)
grep -q '^segment-' <<<"$listing" ||
  fail "no journal segment in the cod-state volume"
say "(b) the journal is in the cod-state volume"

say "all checks passed in $((SECONDS - started)) s"
