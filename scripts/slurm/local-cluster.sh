#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for testing the pipeline's SLURM profile.
#
#   scripts/slurm/local-cluster.sh install   # apt-get the packages (root, Debian/Ubuntu)
#   scripts/slurm/local-cluster.sh start     # munge, MariaDB, slurmdbd, slurmctld, slurmd
#   scripts/slurm/local-cluster.sh status    # which daemons run; sinfo
#   scripts/slurm/local-cluster.sh env       # prints `export SLURM_CONF=...` for eval
#   scripts/slurm/local-cluster.sh stop      # cancel jobs, stop every daemon, leave nothing running
#
# Every daemon runs as root and talks over 127.0.0.1 (MariaDB, slurmctld and slurmd listen
# there only; slurmdbd 22.05 cannot be bound and listens on every interface, but answers only
# clients holding this cluster's private munge key). The state (configs, databases, logs,
# pid files) lives in $VHCT_SLURM_DIR (default /tmp/vhct-slurm). The one file outside it is
# the symlink /etc/slurm/slurm.conf -> $VHCT_SLURM_DIR/etc/slurm.conf, made only where no
# slurm.conf exists and removed by `stop`: Snakemake's slurm-jobstep executor strips
# SLURM_CONF from the environment of the `srun` it runs inside each job, so that srun can
# only find the default path. `start` and `stop` are idempotent. No systemd, no cgroups.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${VHCT_SLURM_DIR:-/tmp/vhct-slurm}"
CLUSTER="${VHCT_SLURM_CLUSTER:-vhct}"
PARTITION="${VHCT_SLURM_PARTITION:-debug}"
CTLD_PORT="${VHCT_SLURM_CTLD_PORT:-6817}"
SLURMD_PORT="${VHCT_SLURM_SLURMD_PORT:-6818}"
DBD_PORT="${VHCT_SLURM_DBD_PORT:-6819}"
DB_PORT="${VHCT_SLURM_DB_PORT:-3316}"      # not 3306: a machine's own MariaDB may hold that
DB_USER=slurm
DB_NAME=slurm_acct_db
DEF_MEM_PER_CPU=500                         # MB a job gets per CPU when it asks for no memory
RESERVED_MEM_MB=1024                        # memory kept back from the node for the daemons
WAIT_SECONDS="${VHCT_SLURM_WAIT:-60}"       # how long start/stop wait for a daemon
PACKAGES=(slurm-wlm slurmdbd munge mariadb-server)
HOST="$(hostname -s)"
export SLURM_CONF="$STATE/etc/slurm.conf"
DEFAULT_CONF=/etc/slurm/slurm.conf          # where SLURM clients look without SLURM_CONF

log() { echo "local-cluster: $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- helpers
pid_alive() {  # pid file -> true if it names a live process
    [[ -s "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

retry() {  # command... -> retry it until it succeeds (0) or WAIT_SECONDS pass (1)
    local deadline=$((SECONDS + WAIT_SECONDS))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 1
    done
}

wait_for() {  # description, command... -> retry the command; give up with an error
    local what="$1"; shift
    retry "$@" || die "timed out waiting for $what (logs: $STATE/log)"
}

stop_pidfile() {  # name, pid file -> TERM, wait, then KILL the process it names
    local name="$1" file="$2" pid
    pid_alive "$file" || { rm -f "$file"; return 0; }
    pid="$(cat "$file")"
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + WAIT_SECONDS))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
        log "$name did not stop; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
}

render() {  # template -> stdout with every @FIELD@ filled in
    sed -e "s|@STATE@|$STATE|g" -e "s|@CLUSTER@|$CLUSTER|g" -e "s|@HOST@|$HOST|g" \
        -e "s|@PARTITION@|$PARTITION|g" -e "s|@CTLD_PORT@|$CTLD_PORT|g" \
        -e "s|@SLURMD_PORT@|$SLURMD_PORT|g" -e "s|@DBD_PORT@|$DBD_PORT|g" \
        -e "s|@DB_PORT@|$DB_PORT|g" -e "s|@DB_USER@|$DB_USER|g" -e "s|@DB_NAME@|$DB_NAME|g" \
        -e "s|@DB_PASS@|$(cat "$STATE/etc/db.pass")|g" -e "s|@CPUS@|$(nproc)|g" \
        -e "s|@MEM_MB@|$(node_mem_mb)|g" -e "s|@DEF_MEM_PER_CPU@|$DEF_MEM_PER_CPU|g" "$1"
}

node_mem_mb() {
    echo $(($(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo) - RESERVED_MEM_MB))
}

check_tools() {
    local tool missing=()
    for tool in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd sacctmgr sacct sbatch; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    ((${#missing[@]} == 0)) || die "missing ${missing[*]}: run '$0 install' (root, Debian/Ubuntu)"
}

# ---------------------------------------------------------------- commands
cmd_install() {
    if command -v slurmctld >/dev/null && command -v slurmdbd >/dev/null \
        && command -v munged >/dev/null && command -v mariadbd >/dev/null; then
        log "packages already installed"; return 0
    fi
    ((EUID == 0)) || die "installing ${PACKAGES[*]} needs root"
    command -v apt-get >/dev/null || die "no apt-get: install ${PACKAGES[*]} by hand"
    apt-get update -qq
    # Package scripts must not start the distribution's own services (we run our own).
    DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq "${PACKAGES[@]}" >/dev/null
    log "installed ${PACKAGES[*]}"
}

configure() {  # state dir, secrets and config files (kept across restarts)
    mkdir -p "$STATE"/{etc,run,log,munge,ctld,spool,mariadb}
    chmod 755 "$STATE" "$STATE/munge"  # the munge socket must be reachable by every user
    chmod 700 "$STATE/etc"
    [[ -s "$STATE/etc/munge.key" ]] || {
        dd if=/dev/urandom of="$STATE/etc/munge.key" bs=1024 count=1 status=none
        chmod 400 "$STATE/etc/munge.key"
    }
    [[ -s "$STATE/etc/db.pass" ]] || {
        (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$STATE/etc/db.pass")
    }
    render "$HERE/slurm.conf.in" >"$STATE/etc/slurm.conf"
    (umask 077; render "$HERE/slurmdbd.conf.in" >"$STATE/etc/slurmdbd.conf")
    render "$HERE/my.cnf.in" >"$STATE/etc/my.cnf"
}

link_default_conf() {  # /etc/slurm/slurm.conf -> ours, unless a real one is there
    if [[ -L "$DEFAULT_CONF" && "$(readlink "$DEFAULT_CONF")" == "$SLURM_CONF" ]]; then return 0; fi
    [[ -e "$DEFAULT_CONF" || -L "$DEFAULT_CONF" ]] \
        && die "$DEFAULT_CONF exists (a real SLURM installation?); not replacing it with the test cluster's"
    mkdir -p "$(dirname "$DEFAULT_CONF")"
    ln -s "$SLURM_CONF" "$DEFAULT_CONF"
}

unlink_default_conf() {
    if [[ -L "$DEFAULT_CONF" && "$(readlink "$DEFAULT_CONF")" == "$SLURM_CONF" ]]; then rm -f "$DEFAULT_CONF"; fi
}

start_munge() {
    pid_alive "$STATE/run/munged.pid" && return 0
    log "starting munged"
    munged --force --key-file="$STATE/etc/munge.key" --socket="$STATE/munge/munge.socket" \
        --pid-file="$STATE/run/munged.pid" --log-file="$STATE/log/munged.log" \
        --seed-file="$STATE/munge/munged.seed" </dev/null
    wait_for munged munge -S "$STATE/munge/munge.socket" -n
}

db() { mariadb --defaults-file="$STATE/etc/my.cnf" "$@"; }

start_mariadb() {
    if ! pid_alive "$STATE/run/mariadb.pid"; then
        if [[ ! -d "$STATE/mariadb/mysql" ]]; then
            log "initialising MariaDB in $STATE/mariadb"
            mariadb-install-db --defaults-file="$STATE/etc/my.cnf" --auth-root-authentication-method=socket \
                >"$STATE/log/mariadb-install.log" 2>&1
        fi
        log "starting MariaDB on 127.0.0.1:$DB_PORT"
        setsid mariadbd --defaults-file="$STATE/etc/my.cnf" </dev/null >>"$STATE/log/mariadb.log" 2>&1 &
        wait_for MariaDB mariadb-admin --defaults-file="$STATE/etc/my.cnf" ping
    fi
    local pass; pass="$(cat "$STATE/etc/db.pass")"
    db -e "CREATE DATABASE IF NOT EXISTS $DB_NAME;
           CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
           ALTER USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
           GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'127.0.0.1';"
}

start_slurmdbd() {
    if ! pid_alive "$STATE/run/slurmdbd.pid"; then
        log "starting slurmdbd on 127.0.0.1:$DBD_PORT"
        slurmdbd </dev/null  # reads slurmdbd.conf next to $SLURM_CONF
    fi
    wait_for slurmdbd sacctmgr -n list cluster
    if [[ -z "$(sacctmgr -n -P list cluster "$CLUSTER" format=cluster)" ]]; then
        sacctmgr -i add cluster "$CLUSTER" >/dev/null
    fi
}

node_ready() { [[ "$(sinfo -h -n "$HOST" -o %T 2>/dev/null)" =~ ^(idle|mixed|allocated)$ ]]; }

start_slurm() {
    if ! pid_alive "$STATE/run/slurmctld.pid"; then
        log "starting slurmctld on 127.0.0.1:$CTLD_PORT"
        slurmctld -f "$SLURM_CONF" </dev/null
    fi
    wait_for slurmctld scontrol ping
    if ! pid_alive "$STATE/run/slurmd.pid"; then
        log "starting slurmd on 127.0.0.1:$SLURMD_PORT"
        slurmd -f "$SLURM_CONF" </dev/null
    fi
    wait_for "node $HOST to be idle" node_ready
}

cmd_start() {
    ((EUID == 0)) || die "the test cluster runs its daemons as root"
    check_tools
    configure
    link_default_conf
    start_munge
    start_mariadb
    start_slurmdbd
    start_slurm
    log "cluster '$CLUSTER' is up; clients need: export SLURM_CONF=$SLURM_CONF"
}

stray_steps() {  # pids of slurmstepd processes serving this cluster's spool directory
    local pid
    for pid in $(pgrep -x slurmstepd || true); do
        if ls -l "/proc/$pid/cwd" "/proc/$pid/fd" 2>/dev/null | grep -q "$STATE/spool"; then echo "$pid"; fi
    done
}

queue_empty() { [[ -z "$(squeue -h -o %i)" ]]; }

cmd_stop() {
    if pid_alive "$STATE/run/slurmctld.pid"; then
        if [[ -n "$(squeue -h -o %i 2>/dev/null)" ]]; then
            log "cancelling the jobs still queued or running"
            scancel --full --cluster="$CLUSTER" --user=root 2>/dev/null || scancel -u root || true
            retry queue_empty || log "jobs still listed after ${WAIT_SECONDS}s; stopping anyway"
        fi
    fi
    stop_pidfile slurmd "$STATE/run/slurmd.pid"
    local pids; pids="$(stray_steps)"
    if [[ -n "$pids" ]]; then
        log "killing stray slurmstepd: $pids"
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
    fi
    stop_pidfile slurmctld "$STATE/run/slurmctld.pid"
    stop_pidfile slurmdbd "$STATE/run/slurmdbd.pid"
    stop_pidfile MariaDB "$STATE/run/mariadb.pid"
    stop_pidfile munged "$STATE/run/munged.pid"
    unlink_default_conf
    log "stopped"
}

cmd_status() {
    local name running=0
    for name in munged mariadb slurmdbd slurmctld slurmd; do
        if pid_alive "$STATE/run/$name.pid"; then
            echo "$name: running (pid $(cat "$STATE/run/$name.pid"))"; running=$((running + 1))
        else
            echo "$name: stopped"
        fi
    done
    if ((running == 5)); then
        sinfo
        return 0
    fi
    return 3  # LSB: not running
}

case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    restart) cmd_stop; cmd_start ;;
    status) cmd_status ;;
    env) echo "export SLURM_CONF=$SLURM_CONF" ;;
    *) echo "usage: $0 {install|start|stop|restart|status|env}" >&2; exit 2 ;;
esac
