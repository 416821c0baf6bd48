#!/usr/bin/env python3
"""Benchmarks/capacity's measurements, fleet check and model (docs/CAPACITY.md).

usage: capacity.py GATE_BIN ROOT WORK SECONDS GATES [--model-only]

Load is open-loop at a fixed rate (fixed_rate.c), as a fleet sized for its
audience runs: a gate's CPU a request depends on how busy it is (a busy event
loop reads and writes more requests a wake-up), so each figure is taken at the
rate a gate of the fleet below runs at, never at saturation.

1. Unit costs, one gate (release) on a one-node Redis Cluster (cluster mode
   keeps per-key slot bookkeeping that a standalone server has not), at the
   sizing rates (one gate at about 60 % of a core: the model's figures):
   distinct media tokens for SECONDS, then one playback session; the gate's
   and Redis's utime + stime from /proc divided by the requests answered;
   MEMORY USAGE of one replay entry and used_memory's growth an entry, its
   hash tables apart.
2. The fleet: GATES gates on a three-node Redis Cluster, each sent media
   tokens at FLEET_RATE a second, and at the same moment the control: the
   gate of step 1 at the same rate. From the control's CPU a request (taken
   under the same contention of this machine) the model predicts the CPU the
   fleet's processes need for the requests answered (its throughput per
   core), and from step 1's entry the cluster's memory for the entries it
   holds; both against what the fleet measured (target: within 15 %).
3. The model at 1 M, 10 M and 30 M concurrent viewers, 2 s and 6 s segments.
"""
import json, os, re, signal, statistics, subprocess, sys, time

from loopback import free_port, wait_port

TICK = os.sysconf("SC_CLK_TCK")
# A gate's media tokens a second in the fleet check and in the unit figures it is
# checked against (Benchmarks/capacity --rate): the fleet's gates, shards and load
# generators must not fill this machine's cores, or queued requests are read in
# batches and cost less than the unit figures say.
FLEET_RATE = int(os.environ.get("CAPACITY_RATE", "600"))
# The sizing figures: one gate at about 60 % of a core, the utilisation the model
# plans for — a gate reads more requests a wake-up than at the check's rate.
SIZING_MEDIA_RATE, SIZING_SESSION_RATE = 3000, 8000
here = os.path.dirname(os.path.abspath(__file__))
CONSTANTS = json.load(open(os.path.join(here, "capacity-constants.json")))


def ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


class Fleet:
    def __init__(self, gate_bin, root, work):
        self.gate_bin, self.root, self.work = gate_bin, root, work
        self.processes = []

    def start(self, name, command):
        log = open(os.path.join(self.work, f"{name}.log"), "w")
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=self.work)
        self.processes.append(process)
        return process

    def stop(self):
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()

    def redis(self, name, cluster=False):
        port = free_port()
        folder = os.path.join(self.work, name)
        os.makedirs(folder, exist_ok=True)
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                   "--dir", folder, "--maxmemory-policy", "noeviction"]
        if cluster:
            # The bus port named, not the port + 10,000 Redis takes by default (beyond 65,535 for a high free port).
            command += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000",
                        "--cluster-port", str(free_port())]
        process = self.start(name, command)
        wait_port(port)
        return port, process

    def gate(self, name, replay):
        port = free_port()
        secret = os.path.join(self.work, "session.key")
        if not os.path.exists(secret):
            with open(secret, "w") as f:
                f.write(os.urandom(32).hex())
            os.chmod(secret, 0o600)
        process = self.start(name, [self.gate_bin, "serve", "--key", os.path.join(self.root, "Samples/keys/trusted"),
                                    "--requestor", "TNT", "--resource-header", "X-Token-Resource",
                                    "--listen", f"127.0.0.1:{port}", "--session-secret", secret, "--replay", replay,
                                    # Three gates, three shards and three wrk share two cores here: a
                                    # request may wait for a core far longer than for Redis.
                                    "--replay-timeout", "1000"])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if subprocess.run(["curl", "-sf", "-o", "/dev/null", f"http://127.0.0.1:{port}/readyz"]).returncode == 0:
                return port, process
            time.sleep(0.1)
        sys.exit(f"capacity: {name} did not become ready: " + open(os.path.join(self.work, f"{name}.log")).read()[-2000:])


def make_cluster(ports):
    if len(ports) == 1:
        redis_cli(ports[0], "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
    else:
        subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{p}" for p in ports], "--cluster-replicas", "0",
                        "--cluster-yes"], check=True, capture_output=True)
    deadline = time.monotonic() + 30
    while any("cluster_state:ok" not in redis_cli(p, "CLUSTER", "INFO") for p in ports):
        if time.monotonic() > deadline:
            sys.exit("capacity: the cluster did not come up")
        time.sleep(0.2)
    return "redis-cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports)


def buckets(entries):
    """Slots of a Redis 7 dict holding `entries`: a power of two, at least 4, grown when full."""
    size = 4
    while size < entries:
        size *= 2
    return size


def table_bytes(entries):
    """The keys' and the expiries' hash tables, a pointer a slot each."""
    return 2 * 8 * (buckets(entries) - 4)


def redis_cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, check=True).stdout.strip()


def used_memory(port):
    return int(re.search(r"^used_memory:(\d+)", redis_cli(port, "INFO", "memory"), re.M).group(1))


def mint(root, count, out):
    subprocess.run([sys.executable, os.path.join(here, "mint_tokens.py"), os.path.join(root, "Samples/keys/test-rsa2048.pem"),
                    "media", str(count), out], check=True)


def fixed_rate(port, rate, seconds, tokens, mode="direct"):
    command = [os.path.join(os.environ["CAPACITY_WORK"], "fixed_rate"), "127.0.0.1", str(port), str(rate), str(seconds), "16",
               tokens, mode]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def fixed_rate_result(process):
    out = process.communicate()[0]
    figures = dict(pair.split("=", 1) for pair in out.split())
    answered, refused = int(figures["answered"]), int(figures["non2xx"]) + int(figures["errors"])
    return answered, refused, float(figures["p99"])


def unit_setup(fleet, root, work):
    """One gate on a one-node cluster, and the session credential it issues."""
    redis_port, redis = fleet.redis("redis-unit", cluster=True)
    port, gate = fleet.gate("gate-unit", make_cluster([redis_port]))
    probe_tokens = os.path.join(work, "unit-probe.txt")
    mint(root, 1, probe_tokens)
    probe = open(probe_tokens).read().strip()
    head = subprocess.run(["curl", "-s", "-D", "-", "-o", "/dev/null", "-H", f"X-Original-URI: /hls/tnt/a.ts?token={probe}",
                           "-H", "X-Token-Resource: TNT", f"http://127.0.0.1:{port}/v1/auth-request"],
                          capture_output=True, text=True).stdout
    session = re.search(r"^x-token-session: *(\S+)", head, re.M | re.I)
    if not session:
        sys.exit("capacity: the gate issued no session credential")
    session_file = os.path.join(work, "unit-session.txt")
    open(session_file, "w").write(session.group(1) + "\n")
    return {"port": port, "gate": gate.pid, "redis_port": redis_port, "redis": redis.pid, "session_file": session_file}


def unit_round(unit, root, work, seconds, media_rate, session_rate):
    tokens = os.path.join(work, "unit-media.txt")
    mint(root, media_rate * seconds + 1, tokens)
    entries_before, memory_before = int(redis_cli(unit["redis_port"], "DBSIZE")), used_memory(unit["redis_port"])
    g0, r0 = ticks(unit["gate"]), ticks(unit["redis"])
    answered, refused, p99 = fixed_rate_result(fixed_rate(unit["port"], media_rate, seconds, tokens))
    g1, r1 = ticks(unit["gate"]), ticks(unit["redis"])
    if refused:
        sys.exit(f"capacity: {refused} of {answered + refused} distinct media tokens refused")
    time.sleep(0.5)  # a hash table's incremental rehash, finished
    entries = int(redis_cli(unit["redis_port"], "DBSIZE")) - entries_before
    key = redis_cli(unit["redis_port"], "RANDOMKEY")
    grown = used_memory(unit["redis_port"]) - memory_before
    g2 = ticks(unit["gate"])
    s_answered, s_refused, s_p99 = fixed_rate_result(fixed_rate(unit["port"], session_rate, seconds, unit["session_file"], "session"))
    g3 = ticks(unit["gate"])
    if s_refused:
        sys.exit(f"capacity: {s_refused} of {s_answered + s_refused} session checks refused")
    return {
        "media_gate_us": (g1 - g0) / TICK / answered * 1e6,
        "media_redis_us": (r1 - r0) / TICK / answered * 1e6,
        "media_rate": media_rate, "media_p99_ms": p99,
        "session_gate_us": (g3 - g2) / TICK / s_answered * 1e6,
        "session_rate": session_rate, "session_p99_ms": s_p99,
        "entry_memory_usage": int(redis_cli(unit["redis_port"], "MEMORY", "USAGE", key)),
        "entry_used_memory": grown / entries,
        # What an entry costs beyond the two hash tables' slots, which grow by doubling.
        "entry_bytes": (grown - table_bytes(entries_before + entries) + table_bytes(entries_before)) / entries,
        "entry_ttl_s": int(redis_cli(unit["redis_port"], "PTTL", key)) / 1000,
    }


def fleet_setup(fleet, gates):
    nodes = [fleet.redis(f"redis-fleet-{n}", cluster=True) for n in range(3)]
    ports = [port for port, _ in nodes]
    replay = make_cluster(ports)
    gate_list = [fleet.gate(f"gate-fleet-{n}", replay) for n in range(gates)]
    return {"gates": gate_list, "nodes": nodes, "ports": ports}


def fleet_round(setup, control, root, work, seconds):
    """The fleet, and beside it at the same moment the control: the one gate on its
    one-node cluster at the same rate a gate. The model predicts the fleet from the
    control's CPU a request, measured under the same contention of this machine."""
    gate_list, nodes, ports = setup["gates"], setup["nodes"], setup["ports"]
    lists = []
    for n in range(len(gate_list) + 1):
        path = os.path.join(work, f"fleet-media-{n}.txt")
        mint(root, FLEET_RATE * seconds + 1, path)
        lists.append(path)
    before = [(int(redis_cli(p, "DBSIZE")), used_memory(p)) for p in ports]
    pids = [process.pid for _, process in gate_list] + [process.pid for _, process in nodes]
    t0 = [ticks(pid) for pid in pids]
    c0 = (ticks(control["gate"]), ticks(control["redis"]))
    targets = [port for port, _ in gate_list] + [control["port"]]
    runs = [fixed_rate(port, FLEET_RATE, seconds, tokens) for port, tokens in zip(targets, lists)]
    results = [fixed_rate_result(run) for run in runs]
    t1 = [ticks(pid) for pid in pids]
    c1 = (ticks(control["gate"]), ticks(control["redis"]))
    control_answered, control_refused, _ = results.pop()
    answered = sum(r[0] for r in results)
    refused = sum(r[1] for r in results) + control_refused
    if refused:
        sys.exit(f"capacity: the fleet refused {refused} of {answered + refused} distinct media tokens")
    unit = {"media_gate_us": (c1[0] - c0[0]) / TICK / control_answered * 1e6,
            "media_redis_us": (c1[1] - c0[1]) / TICK / control_answered * 1e6}
    # Redis gives an idle connection's query buffer back after 2 s (clientsCron): read
    # the memory once they are back, so it counts the entries, not the buffers of the
    # connections the load kept busy (a gate's pool keeps all its connections open).
    time.sleep(3)
    after = [(int(redis_cli(p, "DBSIZE")), used_memory(p)) for p in ports]
    cpu = sum(b - a for a, b in zip(t0, t1)) / TICK
    per_request = (unit["media_gate_us"] + unit["media_redis_us"]) / 1e6
    entry = setup["entry"]
    added = [n1 - n0 for (n0, _), (n1, _) in zip(before, after)]
    return {
        "gates": len(gate_list), "shards": len(ports), "seconds": seconds, "requests": answered,
        "entries": sum(added), "shard_entries": added,
        "cpu": cpu, "predicted_cpu": answered * per_request,
        "p99_ms": max(r[2] for r in results),
        "memory": sum(m1 - m0 for (_, m0), (_, m1) in zip(before, after)),
        "predicted_memory": sum((n1 - n0) * entry["entry_bytes"] + table_bytes(n1) - table_bytes(n0)
                                for (n0, _), (n1, _) in zip(before, after)),
        "naive_memory": sum(added) * entry["entry_memory_usage"],
        "control_gate_us": unit["media_gate_us"], "control_redis_us": unit["media_redis_us"],
    }


def model(unit, viewers, segment_seconds):
    """The fleet for `viewers` concurrent viewers at `segment_seconds` segments, for each
    of the two ways a gate is deployed (docs/CAPACITY.md)."""
    c = CONSTANTS
    media_us = unit["media_gate_us"]
    session_us = unit["session_gate_us"]
    cat_us = session_us * c["cat_over_session_cpu"]
    exchange_us = media_us * c["exchange_over_allow_cpu"]
    manifest_us = session_us * c["manifest_over_session_cpu"]
    starts = max(viewers / c["average_view_seconds"], viewers * c["surge_share"] / c["surge_seconds"])
    renewals = viewers / c["cdn_token_lifetime_seconds"]
    playlist = viewers / segment_seconds if c["live_playlist_reload"] else 0
    segments = viewers / segment_seconds
    edge = {  # the gate in the segment path: nginx auth_request, sessions after one media token
        "starts": starts, "requests": segments + playlist + starts,
        "cpu": (segments + playlist) * session_us + starts * media_us,
    }
    cdn = {  # the CDN exchange: the CDN checks segments; the gate exchanges, renews and rewrites playlists
        "starts": starts, "requests": starts + renewals + playlist,
        "cpu": (starts + renewals) * exchange_us + playlist * manifest_us,
    }
    cat = {  # CATs checked at the origin shield for every segment (no CDN token check at the edge)
        "starts": starts, "requests": segments + playlist + starts,
        "cpu": (segments + playlist) * cat_us + starts * exchange_us,
    }
    out = {}
    for name, way in (("edge", edge), ("cdn", cdn), ("cat", cat)):
        cores = way["cpu"] / 1e6 / c["gate_utilisation"]
        gates = max(2, -(-cores // c["cores_per_gate"]))  # at least two, for a failure
        redis_ops = way["starts"] * c["redis_commands_per_start"]
        redis_cores = redis_ops * unit["media_redis_us"] / 1e6
        live_entries = way["starts"] * unit["entry_ttl_s"]
        memory = live_entries * unit["entry_bytes"] + table_bytes(live_entries)
        shards = max(1, -(-redis_cores // c["redis_shard_utilisation"]), -(-memory // c["redis_shard_memory_bytes"]))
        network = way["requests"] * c["bytes_per_gate_exchange"] * 8
        out[name] = {"rps": way["requests"], "cores": cores, "gates": int(gates), "redis_ops": redis_ops,
                     "redis_cores": redis_cores, "entries": live_entries, "memory": memory, "shards": int(shards),
                     "network_bps": network}
    return out


def print_model(unit):
    c = CONSTANTS
    print(f"The model (constants: Benchmarks/gate-support/capacity-constants.json): gates of {c['cores_per_gate']} cores "
          f"at {c['gate_utilisation']:.0%}, Redis shards at {c['redis_shard_utilisation']:.0%} of a core and "
          f"{c['redis_shard_memory_bytes'] / 2**30:.0f} GiB")
    print("| viewers | segment | way | gate req/s | gate cores | gates | Redis ops/s | live entries | Redis memory | shards | gate traffic |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for viewers in (1_000_000, 10_000_000, 30_000_000):
        for segment in (2, 6):
            figures = model(unit, viewers, segment)
            for name, label in (("edge", "sessions at the edge"), ("cat", "CAT at the origin"), ("cdn", "CDN exchange")):
                f = figures[name]
                print(f"| {viewers / 1e6:.0f} M | {segment} s | {label} | {f['rps'] / 1e3:,.0f} k | {f['cores']:,.0f} | {f['gates']:,} | "
                      f"{f['redis_ops'] / 1e3:,.1f} k | {f['entries'] / 1e6:,.2f} M | {f['memory'] / 2**20:,.0f} MiB | {f['shards']} | "
                      f"{f['network_bps'] / 1e9:,.1f} Gbit/s |")


def main():
    gate_bin, root, work, seconds, gates = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    unit_path = os.path.join(work, "unit.json")
    if "--model-only" in sys.argv:
        print_model(json.load(open(unit_path)))
        return
    rounds = int(os.environ.get("CAPACITY_ROUNDS", "3"))
    fleet = Fleet(gate_bin, root, work)
    sizing, checks = [], []
    try:
        unit_processes = unit_setup(fleet, root, work)
        fleet_processes = fleet_setup(fleet, gates)
        # Interleaved rounds: a unit figure and the fleet it predicts share the machine's mood.
        for n in range(rounds):
            print(f"== round {n + 1} of {rounds}", file=sys.stderr, flush=True)
            sizing.append(unit_round(unit_processes, root, work, seconds, SIZING_MEDIA_RATE, SIZING_SESSION_RATE))
            fleet_processes["entry"] = sizing[-1]
            checks.append(fleet_round(fleet_processes, unit_processes, root, work, seconds))
    finally:
        fleet.stop()
    median = statistics.median
    sized = {key: median(u[key] for u in sizing) for key in sizing[0]}
    json.dump(sized, open(unit_path, "w"), indent=1)
    spread = lambda key: f"{min(u[key] for u in sizing):.1f}–{max(u[key] for u in sizing):.1f}"
    print(f"1. Unit costs, one gate on a one-node Redis Cluster at the sizing rates, {rounds} rounds of {seconds} s, medians (range):")
    print(f"- a media token (a Redis SET NX PX) at {sized['media_rate']:,.0f} req/s: gate {sized['media_gate_us']:.1f} "
          f"({spread('media_gate_us')}) µs CPU, Redis {sized['media_redis_us']:.1f} ({spread('media_redis_us')}) µs CPU a request "
          f"(p99 {sized['media_p99_ms']:.2f} ms)")
    print(f"- a session segment (no Redis) at {sized['session_rate']:,.0f} req/s: gate {sized['session_gate_us']:.1f} "
          f"({spread('session_gate_us')}) µs CPU (p99 {sized['session_p99_ms']:.2f} ms)")
    print(f"- a replay entry: MEMORY USAGE {sized['entry_memory_usage']:.0f} bytes; used_memory grew {sized['entry_used_memory']:.1f} bytes "
          f"an entry, {sized['entry_bytes']:.1f} beyond the hash tables' slots; it lives {sized['entry_ttl_s']:.0f} s")
    print()
    cpu_ratios = [c["predicted_cpu"] / c["cpu"] for c in checks]
    memory_ratios = [c["memory"] / c["predicted_memory"] for c in checks]
    verdict = lambda r: "met" if abs(r - 1) <= 0.15 else "MISSED"
    last = checks[-1]
    control = ", ".join(f"{c['control_gate_us']:.0f}+{c['control_redis_us']:.0f}" for c in checks)
    print(f"2. The fleet: {last['gates']} gates on a {last['shards']}-node Redis Cluster at {FLEET_RATE:,} req/s a gate, {rounds} rounds "
          f"of {seconds} s, each against the control gate beside it (gate+Redis µs a request: {control}); {sum(c['requests'] for c in checks):,} distinct media "
          f"tokens answered, entries per shard in the last round {last['shard_entries']}, p99 {median(c['p99_ms'] for c in checks):.2f} ms:")
    used = ", ".join(f"{c['cpu']:.2f}" for c in checks)
    modelled = ", ".join(f"{c['predicted_cpu']:.2f}" for c in checks)
    print(f"- throughput per core, measured / model: {median(cpu_ratios):.2f} (rounds: {', '.join(f'{r:.2f}' for r in cpu_ratios)}; "
          f"CPU used {used} core-s, model {modelled})"
          f"   target within 15 %: {verdict(median(cpu_ratios))}")
    print(f"- Redis memory, measured / model: {median(memory_ratios):.2f} (rounds: {', '.join(f'{r:.2f}' for r in memory_ratios)}; "
          f"last round {last['memory'] / 2**20:.2f} MiB for {last['entries']:,} entries, model {last['predicted_memory'] / 2**20:.2f} MiB, "
          f"MEMORY USAGE alone {last['naive_memory'] / 2**20:.2f} MiB)   target within 15 %: {verdict(median(memory_ratios))}")
    print()
    print_model(sized)


if __name__ == "__main__":
    main()
