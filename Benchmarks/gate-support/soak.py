#!/usr/bin/env python3
"""Benchmarks/soak's run: two gates behind the shipped nginx site on Redis
Sentinel, a steady mixed load, and an operator's events on a schedule, all at
once (docs/PERFORMANCE.md "A soak with every operator event").

usage: soak.py GATE_BIN NGINX_BIN ROOT WORK MINUTES

The schedule is an hour's, scaled to MINUTES: a key rotation every 5 minutes
of the hour (a new issuer key added and used, the old one removed after an
overlap), an nginx reload every 10, a Redis failover every 15 (SENTINEL
FAILOVER), a rolling restart of the gates every 20.

The load: viewers that each open a playback session with a fresh media token
(through nginx, as a player), fetch segments on it, now and then present the
used token again (a replay) or a garbage token. Every answer is judged against
what the schedule explains; the gates' RSS, descriptors and threads and the
load's p50/p99 are sampled every 10 s into samples.csv, drawn into soak.svg.
Exit 1 when an answer is not explained (a failed request, a double allow, a 503
outside a failover); the other judgements' misses are reported.
"""
import base64, csv, datetime, http.client, os, random, signal, statistics, subprocess, sys
import threading, time, uuid

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from loopback import free_port, wait_port

gate_bin, nginx_bin, root, work, minutes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
duration = minutes * 60
scale = minutes / 60
SAMPLE_SECONDS = 10 if minutes >= 10 else 5
VIEWERS = 6
SEGMENTS_PER_SESSION = 8
SEGMENT_PAUSE = 0.05


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


processes = []


def start(name, command, **kwargs):
    out = open(os.path.join(work, f"{name}.log"), "a")
    process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, **kwargs)
    processes.append(process)
    return process


def stop_all():
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


# ---- keys and tokens ---------------------------------------------------------
key_dir = os.path.join(work, "keys")
os.makedirs(key_dir, exist_ok=True)


class Issuer:
    """The programmer's signing key; tokens minted now, valid 7 minutes (mint_tokens.py's element)."""

    def __init__(self, name):
        self.name = name
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public_path = os.path.join(key_dir, f"{name}.pub.pem")

    def publish(self):
        pem = self.key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        with open(self.public_path + ".partial", "wb") as f:
            f.write(pem)
        os.replace(self.public_path + ".partial", self.public_path)

    def withdraw(self):
        os.remove(self.public_path)

    def mint(self):
        """A media token as mint_tokens.py writes it: legacy signatureInfo form, Base64url."""
        issue = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000")
        body = (f"<authToken><sessionGUID>{uuid.uuid4().hex}</sessionGUID><requestorID>TNT</requestorID>"
                f"<resourceID>TNT</resourceID><ttl>420000</ttl><issueTime>{issue}</issueTime>"
                f"<mvpdId>Comcast_SSO</mvpdId></authToken>").encode()
        signature = base64.b64encode(self.key.sign(body, padding.PKCS1v15(), hashes.SHA256()))
        return base64.urlsafe_b64encode(b"<signatureInfo>" + signature + b"<signatureInfo>" + body).rstrip(b"=").decode()


# ---- the servers -------------------------------------------------------------
class Topology:
    def __init__(self):
        self.redis = [free_port(), free_port()]
        self.sentinels = [free_port() for _ in range(3)]
        self.gates = [free_port(), free_port()]
        self.gate_processes = [None, None]
        self.nginx_port, self.origin_port = free_port(), free_port()
        self.secret = os.path.join(work, "session.key")
        with open(self.secret, "w") as f:
            f.write(os.urandom(32).hex())
        os.chmod(self.secret, 0o600)

    def start_redis(self):
        for n, port in enumerate(self.redis):
            folder = os.path.join(work, f"redis-{n}")
            os.makedirs(folder, exist_ok=True)
            # docs/REDIS.md's recommended settings; without the sync delay of 0 a replica's full
            # resync (at start, or after a failover) holds every write's WAIT for 5 s.
            command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                       "--dir", folder, "--maxmemory-policy", "noeviction", "--repl-diskless-sync-delay", "0"]
            if n:
                command += ["--replicaof", "127.0.0.1", str(self.redis[0])]
            start(f"redis-{n}", command)
            wait_port(port)
        deadline = time.monotonic() + 30
        while "master_link_status:up" not in sentinel_cli(self.redis[1], "INFO", "replication"):
            if time.monotonic() > deadline:
                raise SystemExit("soak: the replica never caught up")
            time.sleep(0.1)
        for n, port in enumerate(self.sentinels):
            path = os.path.join(work, f"sentinel-{n}.conf")
            with open(path, "w") as f:
                f.write(f"port {port}\nbind 127.0.0.1\ndir {work}\n"
                        f"sentinel monitor mymaster 127.0.0.1 {self.redis[0]} 2\n"
                        "sentinel down-after-milliseconds mymaster 2000\nsentinel failover-timeout mymaster 10000\n"
                        "sentinel parallel-syncs mymaster 1\n")
            start(f"sentinel-{n}", ["redis-sentinel", path])
            wait_port(port)
        deadline = time.monotonic() + 30
        while "slaves=1" not in sentinel_cli(self.sentinels[0], "INFO", "sentinel").replace(" ", ""):
            if time.monotonic() > deadline:
                raise SystemExit("soak: the sentinels never saw the replica")
            time.sleep(0.2)

    def start_gate(self, n):
        port = self.gates[n]
        replay = "redis-sentinel://" + ",".join(f"127.0.0.1:{p}" for p in self.sentinels) + "/0#mymaster"
        process = start(f"gate-{n}", [gate_bin, "serve", "--key", key_dir, "--requestor", "TNT",
                                      "--resource-header", "X-Token-Resource", "--listen", f"127.0.0.1:{port}",
                                      "--session-secret", self.secret, "--replay", replay,
                                      "--replay-durability", "replicated",
                                      # Two gates, nginx, five Redis processes and the load share two
                                      # cores here: the deadline allows for a core's wait, not Redis's.
                                      "--replay-timeout", "250"])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                connection.request("GET", "/readyz")
                if connection.getresponse().status == 200:
                    self.gate_processes[n] = process
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"soak: gate {n} did not become ready")

    def start_nginx(self):
        folder = os.path.join(work, "nginx")
        for sub in ("logs", "tmp", "www/hls/tnt", "snippets"):
            os.makedirs(os.path.join(folder, sub), exist_ok=True)
        with open(os.path.join(folder, "www/hls/tnt/seg.ts"), "w") as f:
            f.write("segment\n")
        site = open(os.path.join(root, "deploy/nginx/tokengate.conf")).read()
        gates = "\n".join(f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;" for p in self.gates)
        site = site.replace("    server 127.0.0.1:8089 max_fails=1 fail_timeout=5s;", gates)
        site = site.replace("server 127.0.0.1:8080;", f"server 127.0.0.1:{self.origin_port};")
        site = site.replace("listen 80;", f"listen 127.0.0.1:{self.nginx_port};")
        site = site.replace("/var/log/nginx/tokengate.access.log", os.path.join(folder, "logs/access.log"))
        open(os.path.join(folder, "site.conf"), "w").write(site)
        for snippet in ("tokengate-location.conf", "tokengate-headers.conf"):
            open(os.path.join(folder, "snippets", snippet), "w").write(open(os.path.join(root, "deploy/nginx", snippet)).read())
        user = "user root;\n" if os.getuid() == 0 else ""
        t = os.path.join(folder, "tmp")
        open(os.path.join(folder, "nginx.conf"), "w").write(
            f"{user}worker_processes 1;\npid {folder}/logs/nginx.pid;\nerror_log {folder}/logs/error.log warn;\n"
            "events { worker_connections 1024; }\nhttp {\n"
            f"  client_body_temp_path {t}/body; proxy_temp_path {t}/proxy; fastcgi_temp_path {t}/fastcgi;\n"
            f"  uwsgi_temp_path {t}/uwsgi; scgi_temp_path {t}/scgi;\n"
            f"  include {folder}/site.conf;\n"
            f"  server {{ listen 127.0.0.1:{self.origin_port}; root {folder}/www; access_log off; }}\n}}\n")
        self.nginx = start("nginx", [nginx_bin, "-p", folder, "-c", os.path.join(folder, "nginx.conf"), "-g", "daemon off;"])
        wait_port(self.nginx_port)

    def reload_nginx(self):
        self.nginx.send_signal(signal.SIGHUP)


def sentinel_cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True).stdout


# ---- what the schedule explains -----------------------------------------------
class Windows:
    """Times (monotonic) during which an answer other than the usual one is explained."""

    def __init__(self):
        self.lock = threading.Lock()
        self.failovers = []  # [start, end]
        self.failover_seconds = []  # (switched, a replica online again), from the command
        self.events = []     # (time, label) for the plot

    def mark(self, label):
        with self.lock:
            self.events.append((time.monotonic(), label))

    def in_failover(self, at):
        with self.lock:
            return any(start - 1 <= at <= end + 1 for start, end in self.failovers)


class Load:
    def __init__(self, topology, windows):
        self.topology, self.windows = topology, windows
        self.issuer_lock = threading.Lock()
        self.issuers = {}          # name -> Issuer, while its key is trusted
        self.current = None
        self.withdrawn_at = {}     # issuer name -> when its key left the ring
        self.lock = threading.Lock()
        self.records = []          # (time, kind, status, token_status, latency)
        self.unexplained = []
        self.stop = threading.Event()
        self.retries = 0

    def issuer(self):
        with self.issuer_lock:
            return self.current

    def request(self, connection, path, headers):
        """One GET on a kept connection. A kept connection the server closed before
        answering (nginx's reload closes its idle ones) is retried once on a new
        one, as browsers and players retry an idempotent request (RFC 9110 §9.2.2);
        a request that reached the gate and is sent again shows as a replay."""
        started = time.monotonic()
        for attempt in (1, 2):
            reused = connection.sock is not None
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
                return response.status, response.getheader("X-Token-Status") or "", response.getheader("Set-Cookie") or "", started
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
                connection.close()
                if attempt == 1 and reused:
                    with self.lock:
                        self.retries += 1
                    continue
                return 0, type(error).__name__, "", started
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                return 0, type(error).__name__, "", started

    def record(self, kind, status, token_status, started, explained):
        finished = time.monotonic()
        with self.lock:
            self.records.append((finished, kind, status, token_status, finished - started))
            if not explained:
                self.unexplained.append((round(finished - self.begin, 1), kind, status, token_status))

    def viewer(self, seed):
        rng = random.Random(seed)
        connection = http.client.HTTPConnection("127.0.0.1", self.topology.nginx_port, timeout=10)
        while not self.stop.is_set():
            issuer = self.issuer()
            token = issuer.mint()
            status, token_status, cookie, started = self.request(connection, f"/hls/tnt/seg.ts?token={token}", {})
            unavailable = status == 503 and token_status == "REPLAY_CHECK_UNAVAILABLE" and self.windows.in_failover(started)
            self.record("media", status, token_status, started, status == 200 or unavailable)
            if status != 200:
                time.sleep(0.2)
                continue
            session = cookie.split(";", 1)[0]
            for _ in range(SEGMENTS_PER_SESSION):
                if self.stop.is_set():
                    break
                status, token_status, _, started = self.request(connection, "/hls/tnt/seg.ts", {"Cookie": session})
                # A session admitted by a key that left the ring ends with it (docs/DESIGN.md#revocation-is-exact).
                withdrawn = self.withdrawn_at.get(issuer.name)
                ended = status == 403 and token_status == "INVALID_SESSION" and withdrawn is not None and started >= withdrawn - 6
                self.record("segment", status, token_status, started, status == 200 or ended)
                time.sleep(SEGMENT_PAUSE)
            if rng.random() < 0.3:
                status, token_status, _, started = self.request(connection, f"/hls/tnt/seg.ts?token={token}", {})
                unavailable = status == 503 and token_status == "REPLAY_CHECK_UNAVAILABLE" and self.windows.in_failover(started)
                self.record("replay", status, token_status, started, (status == 403 and token_status == "TOKEN_REPLAYED") or unavailable)
            if rng.random() < 0.2:
                garbage = base64.urlsafe_b64encode(os.urandom(rng.randrange(8, 600))).decode()
                status, token_status, _, started = self.request(connection, f"/hls/tnt/seg.ts?token={garbage}", {})
                self.record("garbage", status, token_status, started, status in (400, 401, 403))


# ---- the operator's events ----------------------------------------------------
def rotate_keys(load, windows, topology, generation):
    new = Issuer(f"issuer-{generation}")
    new.publish()
    for process in topology.gate_processes:
        process.send_signal(signal.SIGHUP)
    time.sleep(1)  # both gates have read it before a token of it is sent
    with load.issuer_lock:
        old, load.current = load.current, new
        load.issuers[new.name] = new
    windows.mark("key rotation")
    log(f"key rotation: {new.name} added and used")
    # The overlap: tokens of the old key minted just before the switch are still sent.
    time.sleep(max(3.0, 20 * scale))
    old.withdraw()
    with load.issuer_lock:
        load.issuers.pop(old.name, None)
    load.withdrawn_at[old.name] = time.monotonic()
    for process in topology.gate_processes:
        process.send_signal(signal.SIGHUP)
    log(f"key rotation: {old.name} removed")


def failover(windows, topology):
    start_time = time.monotonic()
    with windows.lock:  # open until the failover is over: answers are judged as they come
        windows.failovers.append([start_time, float("inf")])
    before = sentinel_cli(topology.sentinels[0], "SENTINEL", "get-master-addr-by-name", "mymaster").split()
    sentinel_cli(topology.sentinels[0], "SENTINEL", "FAILOVER", "mymaster")
    deadline = start_time + 30
    while time.monotonic() < deadline:
        now = sentinel_cli(topology.sentinels[0], "SENTINEL", "get-master-addr-by-name", "mymaster").split()
        if now and now != before:
            break
        time.sleep(0.1)
    switched = time.monotonic()
    # Under `replicated`, a write is accepted once a replica has it: with one replica the
    # window lasts until the sentinels turn the old primary into the new one's replica
    # (at their next INFO of it, up to 10 s) and it has caught up.
    while time.monotonic() < deadline + 30 and now:
        replication = sentinel_cli(int(now[-1]), "INFO", "replication")
        if "state=online" in replication:
            break
        time.sleep(0.1)
    time.sleep(1)
    with windows.lock:
        windows.failovers[-1][1] = time.monotonic()
        windows.failover_seconds.append((switched - start_time, time.monotonic() - start_time))
    windows.mark("failover")
    log(f"failover: {before[-1] if before else '?'} -> {now[-1] if now else '?'} switched in {switched - start_time:.1f} s, "
        f"a replica online after {time.monotonic() - start_time - 1:.1f} s")


def rolling_restart(windows, topology):
    windows.mark("rolling restart")
    for n in range(len(topology.gates)):
        process = topology.gate_processes[n]
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        topology.start_gate(n)
        # nginx leaves a gate it could not reach out for fail_timeout (5 s): wait it out before the next.
        time.sleep(6)
    log("rolling restart: both gates restarted")


def scheduler(load, windows, topology):
    every = {"rotation": 300 * scale, "reload": 600 * scale, "failover": 900 * scale, "restart": 1200 * scale}
    due = dict(every)
    generation = 1
    begin = load.begin
    while not load.stop.is_set():
        elapsed = time.monotonic() - begin
        for event, at in sorted(due.items(), key=lambda item: item[1]):
            if elapsed < at or elapsed > duration - 5:
                continue
            due[event] += every[event]
            if event == "rotation":
                rotate_keys(load, windows, topology, generation)
                generation += 1
            elif event == "reload":
                topology.reload_nginx()
                windows.mark("nginx reload")
                log("nginx reload")
            elif event == "failover":
                failover(windows, topology)
            elif event == "restart":
                rolling_restart(windows, topology)
            break
        time.sleep(0.2)


# ---- samples ------------------------------------------------------------------
def process_figures(pid):
    status = open(f"/proc/{pid}/status").read()
    rss = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024
    threads = int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, fds, threads


def sampler(load, topology, rows):
    next_at = load.begin + SAMPLE_SECONDS
    seen = 0
    while not load.stop.is_set():
        time.sleep(max(0, next_at - time.monotonic()))
        next_at += SAMPLE_SECONDS
        with load.lock:
            window = load.records[seen:]
            seen = len(load.records)
        latencies = sorted(r[4] * 1000 for r in window)
        row = {"seconds": round(time.monotonic() - load.begin, 1), "requests": len(window),
               "p50_ms": round(latencies[len(latencies) // 2], 3) if latencies else "",
               "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 3) if latencies else ""}
        for n, process in enumerate(topology.gate_processes):
            try:
                rss, fds, threads = process_figures(process.pid)
            except (OSError, StopIteration):
                rss = fds = threads = ""
            row.update({f"gate{n}_pid": process.pid, f"gate{n}_rss_mib": round(rss, 2) if rss != "" else "",
                        f"gate{n}_fds": fds, f"gate{n}_threads": threads})
        rows.append(row)


# ---- judgement ------------------------------------------------------------------
def slope_per_hour(points):
    """Least-squares slope of (seconds, value) in value an hour."""
    if len(points) < 3:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    denominator = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / denominator * 3600 if denominator else None


def span(seconds):
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


def judge(rows, load, windows):
    warm = min(600, duration / 6)
    verdicts = []
    for n in range(2):
        lives = {}
        for row in rows:
            if row[f"gate{n}_rss_mib"] == "":
                continue
            lives.setdefault(row[f"gate{n}_pid"], []).append(row)
        slopes, fd_spans, thread_spans = [], [], []
        for pid, life in lives.items():
            born = life[0]["seconds"]
            settled = [r for r in life if r["seconds"] - born >= warm]
            if len(settled) < 3:
                continue
            slope = slope_per_hour([(r["seconds"], r[f"gate{n}_rss_mib"]) for r in settled])
            slopes.append(slope)
            fd_spans.append(max(r[f"gate{n}_fds"] for r in settled) - min(r[f"gate{n}_fds"] for r in settled))
            thread_spans.append(max(r[f"gate{n}_threads"] for r in settled) - min(r[f"gate{n}_threads"] for r in settled))
        if slopes:
            worst = max(slopes)
            verdicts.append((f"gate {n}: RSS growth after each process's first {span(warm)}, worst of {len(slopes)} "
                             f"process(es): {worst:+.2f} MiB an hour", worst <= 1.0, "<= 1 MiB an hour"))
            verdicts.append((f"gate {n}: descriptors vary by {max(fd_spans)}, threads by {max(thread_spans)} once settled",
                             max(fd_spans) <= 16 and max(thread_spans) <= 2, "flat: descriptors within 16 (connections come and go), threads within 2"))
        else:
            verdicts.append((f"gate {n}: no process lived {span(warm)} past its start", None, "not judged"))
    window = min(600, duration / 6)
    first = sorted(r[4] for r in load.records if r[0] - load.begin <= window)
    last = sorted(r[4] for r in load.records if r[0] - load.begin >= duration - window)
    p99 = lambda values: values[min(len(values) - 1, int(len(values) * 0.99))] * 1000
    if first and last:
        ratio = p99(last) / p99(first)
        verdicts.append((f"p99 of the last {span(window)} {p99(last):.2f} ms against the first's {p99(first):.2f} ms: "
                         f"{ratio:.2f}x", ratio <= 1.2, "<= 1.2x"))
    kinds = {}
    for record in load.records:
        kinds.setdefault((record[1], record[2], record[3]), 0)
        kinds[(record[1], record[2], record[3])] += 1
    verdicts.append((f"answers not explained by the schedule: {len(load.unexplained)} of {len(load.records)}",
                     not load.unexplained, "0"))
    return verdicts, kinds


def plot(rows, windows, begin, path):
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(4, 1, figsize=(11, 11), sharex=True)
    minutes_of = lambda seconds: seconds / 60
    x = [minutes_of(r["seconds"]) for r in rows]
    for n in range(2):
        pick = lambda key: [r[f"gate{n}_{key}"] if r[f"gate{n}_{key}"] != "" else None for r in rows]
        axes[0].plot(x, pick("rss_mib"), label=f"gate {n}")
        axes[1].plot(x, pick("fds"), label=f"gate {n}")
        axes[2].plot(x, pick("threads"), label=f"gate {n}")
    axes[3].plot(x, [r["p50_ms"] if r["p50_ms"] != "" else None for r in rows], label="p50")
    axes[3].plot(x, [r["p99_ms"] if r["p99_ms"] != "" else None for r in rows], label="p99")
    for axis, label in zip(axes, ("RSS, MiB", "open descriptors", "threads", "latency through nginx, ms")):
        axis.set_ylabel(label)
        axis.legend(loc="upper right", fontsize=8)
        axis.grid(alpha=0.3)
    colours = {"key rotation": "tab:green", "nginx reload": "tab:gray", "failover": "tab:red", "rolling restart": "tab:purple"}
    for at, label in windows.events:
        for axis in axes:
            axis.axvline(minutes_of(at - begin), color=colours.get(label, "black"), alpha=0.35, linewidth=0.8)
    axes[3].set_xlabel("minutes (lines: green key rotation, gray nginx reload, red failover, purple rolling restart)")
    axes[0].set_title(f"tokengate soak: two gates, nginx, Redis Sentinel, {minutes:g} minutes")
    figure.tight_layout()
    figure.savefig(path)


def warm_up(load, topology):
    """Fresh media tokens through nginx, one at a time, until each of the first
    six was allowed: nginx takes turns between the gates, so both have opened
    their replay store's connections before the schedule starts. Without it the
    six viewers' first requests arrive together at gates still connecting, under
    the 250 ms replay deadline, and come back 503, which no event explains.
    Not recorded: the soak judges steady operation from here on."""
    deadline = time.monotonic() + 30
    connection = http.client.HTTPConnection("127.0.0.1", topology.nginx_port, timeout=10)
    allowed = 0
    while allowed < 6:
        if time.monotonic() > deadline:
            raise SystemExit("soak: the gates did not allow a media token within 30 s of starting")
        status, _, _, _ = load.request(connection, f"/hls/tnt/seg.ts?token={load.current.mint()}", {})
        if status == 200:
            allowed += 1
        else:
            time.sleep(0.2)
    connection.close()


def main():
    topology = Topology()
    windows = Windows()
    load = Load(topology, windows)
    first = Issuer("issuer-0")
    first.publish()
    load.current = first
    load.issuers[first.name] = first
    rows = []
    try:
        log("starting Redis (a primary, a replica, three sentinels), two gates, nginx")
        topology.start_redis()
        topology.start_gate(0)
        topology.start_gate(1)
        topology.start_nginx()
        warm_up(load, topology)
        load.begin = time.monotonic()
        threads = [threading.Thread(target=load.viewer, args=(n,), daemon=True) for n in range(VIEWERS)]
        threads.append(threading.Thread(target=sampler, args=(load, topology, rows), daemon=True))
        threads.append(threading.Thread(target=scheduler, args=(load, windows, topology), daemon=True))
        for thread in threads:
            thread.start()
        log(f"loaded for {minutes:g} minutes")
        while time.monotonic() - load.begin < duration:
            time.sleep(1)
        load.stop.set()
        for thread in threads:
            thread.join(timeout=40)
    finally:
        stop_all()
    with open(os.path.join(work, "samples.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, windows, load.begin, os.path.join(work, "soak.svg"))
    verdicts, kinds = judge(rows, load, windows)
    events = {}
    for _, label in windows.events:
        events[label] = events.get(label, 0) + 1
    print(f"tokengate soak, {minutes:g} minutes, {len(load.records):,} requests through nginx "
          f"({len(load.records) / duration:.0f} a second); events: " + ", ".join(f"{v} {k}" for k, v in sorted(events.items())))
    if windows.failover_seconds:
        print("failovers (s from SENTINEL FAILOVER: the switch, a replica online again): "
              + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in windows.failover_seconds))
    print("answers (kind, status, X-Token-Status: count):")
    for (kind, status, token_status), count in sorted(kinds.items()):
        print(f"  {kind:8} {status:3} {token_status or '-':26} {count:,}")
    print(f"kept connections the server had closed, retried once on a new one: {load.retries}")
    for text, ok, target in verdicts:
        mark = "met" if ok else ("not judged" if ok is None else "MISSED")
        print(f"- {text}   target {target}: {mark}")
    failed = bool(load.unexplained)
    for entry in load.unexplained[:20]:
        print(f"  unexplained at {entry[0]} s: {entry[1]} {entry[2]} {entry[3]}")
    print(f"samples: {os.path.join(work, 'samples.csv')}; plot: {os.path.join(work, 'soak.svg')}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
