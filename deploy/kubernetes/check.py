#!/usr/bin/env python3
"""The security properties of the Kubernetes manifests in this folder, asserted
so that a change that loses one fails (docs/DEPLOY.md#9-kubernetes).

    python3 deploy/kubernetes/check.py [FOLDER]

Needs PyYAML (kubernetes-validate brings it). The schemas themselves are
kubernetes-validate's job (`kubernetes-validate --strict`); this checks what a
schema cannot: every container non-root on a read-only root with no privilege
escalation and no capability; probes on /healthz and /readyz at the gate's
port; resources set; Secrets mounted read-only, readable by the gate's group
only; no Secret shipped with content; the replay URL of the settings naming
its password by file, never holding one; the Service, the PodDisruptionBudget
and the NetworkPolicy selecting the Deployment's pods; the NetworkPolicy
letting in only the gate's port and out only Redis and DNS; a termination
grace longer than the drain the settings ask for; volumes `podman kube play`
can mount (no projected volume, no subPath, Secret volumes stating
`optional: false`). Prints every problem and exits 1, or prints one line and
exits 0.
"""
import os
import re
import sys
from urllib.parse import urlsplit, parse_qs

import yaml

FOLDER = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__))
KINDS = {"Namespace", "ConfigMap", "Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy"}
SETTINGS_FILE = "tokengate.conf"
# The gate's defaults (tokengate serve --help) where the settings omit one.
DEFAULT_SHUTDOWN_GRACE = 2.0
DEFAULT_REQUEST_TIMEOUT = 10.0
# Redis, Redis Sentinel (plain and the usual TLS ports) and DNS.
EGRESS_PORTS = {("TCP", 6379), ("TCP", 6380), ("TCP", 26379), ("TCP", 26380), ("UDP", 53), ("TCP", 53)}

problems = []
checks = 0


def expect(condition, message):
    global checks
    checks += 1
    if not condition:
        problems.append(message)
    return condition


def load_manifests():
    """Every object of every manifest, with the file it came from."""
    objects = []
    for name in sorted(os.listdir(FOLDER)):
        if not name.endswith((".yaml", ".yml")) or name == "kustomization.yaml":
            continue
        with open(os.path.join(FOLDER, name), encoding="utf-8") as file:
            for document in yaml.safe_load_all(file):
                if document is not None:
                    objects.append((name, document))
    return objects


def settings(text):
    """The `name = value` lines of a settings file, as (name, value) pairs in order."""
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        pairs.append((name.strip(), value))
    return pairs


def last(pairs, name, default=None):
    values = [value for key, value in pairs if key == name]
    return values[-1] if values else default


def selects(selector, labels):
    """Whether a matchLabels selector (or a Service's plain selector) picks pods with `labels`."""
    if not selector:
        return False
    match = selector.get("matchLabels", selector) if "matchExpressions" not in selector else None
    return bool(match) and all(labels.get(key) == value for key, value in match.items())


def check_kustomization(objects):
    with open(os.path.join(FOLDER, "kustomization.yaml"), encoding="utf-8") as file:
        kustomization = yaml.safe_load(file)
    files = sorted({name for name, _ in objects})
    expect(sorted(kustomization.get("resources", [])) == files,
           f"kustomization.yaml: resources {sorted(kustomization.get('resources', []))} are not the manifests {files}")
    return kustomization


def check_container(container, pod_security):
    name = container.get("name", "?")
    security = container.get("securityContext") or {}

    def effective(key):
        return security.get(key, pod_security.get(key))

    expect(effective("runAsNonRoot") is True, f"container {name}: runAsNonRoot is not true")
    user = effective("runAsUser")
    expect(isinstance(user, int) and user > 0, f"container {name}: runAsUser is not a fixed non-root id ({user})")
    group = effective("runAsGroup")
    expect(isinstance(group, int) and group > 0, f"container {name}: runAsGroup is not a fixed non-root id ({group})")
    expect(security.get("readOnlyRootFilesystem") is True, f"container {name}: readOnlyRootFilesystem is not true")
    expect(security.get("allowPrivilegeEscalation") is False, f"container {name}: allowPrivilegeEscalation is not false")
    expect(security.get("privileged") in (None, False), f"container {name}: privileged")
    capabilities = security.get("capabilities") or {}
    expect("ALL" in (capabilities.get("drop") or []), f"container {name}: capabilities do not drop ALL")
    expect(not capabilities.get("add"), f"container {name}: adds capabilities {capabilities.get('add')}")
    seccomp = (effective("seccompProfile") or {}).get("type")
    expect(seccomp in ("RuntimeDefault", "Localhost"), f"container {name}: seccompProfile is {seccomp}, not RuntimeDefault")
    resources = container.get("resources") or {}
    for kind in ("requests", "limits"):
        for resource in ("cpu", "memory"):
            expect(resource in (resources.get(kind) or {}), f"container {name}: no {kind}.{resource}")


def port_number(container, port):
    """A probe's or Service's port, a name of the container's ports or a number."""
    if isinstance(port, int):
        return port
    for declared in container.get("ports") or []:
        if declared.get("name") == port:
            return declared.get("containerPort")
    return None


def check_probe(container, kind, path, gate_port):
    probe = container.get(kind) or {}
    http = probe.get("httpGet") or {}
    expect(http.get("path") == path, f"{kind}: httpGet path is {http.get('path')}, not {path}")
    expect(port_number(container, http.get("port")) == gate_port,
           f"{kind}: port {http.get('port')} is not the gate's port {gate_port}")


def mounted_file(container, volumes, path):
    """The volume and mount that put `path` in the container, and the name inside the volume."""
    for mount in container.get("volumeMounts") or []:
        where = mount["mountPath"].rstrip("/")
        if path == where and mount.get("subPath"):
            return volumes.get(mount["name"]), mount, mount["subPath"]
        if path.startswith(where + "/"):
            return volumes.get(mount["name"]), mount, path[len(where) + 1:]
        if path == where:
            return volumes.get(mount["name"]), mount, ""
    return None, None, None


def secret_volume_files(volume):
    """The file names a Secret or projected-Secret volume holds (None: every key of the Secret)."""
    if "secret" in volume:
        items = volume["secret"].get("items")
        return None if items is None else {item["path"] for item in items}
    names = set()
    for source in volume.get("projected", {}).get("sources", []):
        if "secret" not in source:
            return set()
        items = source["secret"].get("items")
        if items is None:
            return None
        names |= {item["path"] for item in items}
    return names


def is_secret_volume(volume):
    if "secret" in volume:
        return True
    sources = volume.get("projected", {}).get("sources", [])
    return bool(sources) and all("secret" in source for source in sources)


def modes(volume):
    """Every file mode a Secret volume sets: its default and any item's."""
    if "secret" in volume:
        found = [volume["secret"].get("defaultMode", 0o644)]
        found += [item["mode"] for item in volume["secret"].get("items") or [] if "mode" in item]
        return found
    found = [volume["projected"].get("defaultMode", 0o644)]
    for source in volume["projected"]["sources"]:
        found += [item["mode"] for item in source["secret"].get("items") or [] if "mode" in item]
    return found


def check_secret_file(container, volumes, path, what):
    volume, mount, name = mounted_file(container, volumes, path)
    if not expect(volume is not None and is_secret_volume(volume), f"{what} {path} is not in a mounted Secret"):
        return
    expect(mount.get("readOnly") is True, f"{what} {path}: the mount {mount['name']} is not readOnly")
    files = secret_volume_files(volume)
    if name and files is not None:
        expect(name in files, f"{what} {path}: the volume {mount['name']} holds no file {name} (it holds {sorted(files)})")


def check_replay(url, container, volumes):
    expect(url.startswith(("redis-sentinel://", "rediss-sentinel://")), f"replay {url!r} does not name a Redis Sentinel")
    before_fragment, _, primary = url.partition("#")
    expect(bool(primary), "replay names no primary after #")
    parts = urlsplit(before_fragment)
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    expect(":" not in userinfo, "replay holds a password in the URL (user:password@)")
    query = parse_qs(parts.query)
    for inline in ("password", "sentinel-password"):
        expect(inline not in query, f"replay holds {inline}= in the URL")
    files = query.get("password-file", [])
    if expect(len(files) == 1, "replay names no password-file="):
        expect(files[0].startswith("/"), "password-file= is not an absolute path (no $CREDENTIALS_DIRECTORY here)")
        check_secret_file(container, volumes, files[0], "password-file")
    expect(not userinfo or files, "replay has a user@ without password-file= (read as a password)")
    for path in query.get("sentinel-password-file", []):
        check_secret_file(container, volumes, path, "sentinel-password-file")


def main():
    objects = load_manifests()
    kinds = [document.get("kind") for _, document in objects]
    expect(sorted(kinds) == sorted(KINDS), f"the manifests hold {sorted(kinds)}, not one each of {sorted(KINDS)}")
    expect("Secret" not in kinds, "a Secret is shipped: create them from files (docs/DEPLOY.md#9-kubernetes)")
    check_kustomization(objects)
    by_kind = {document.get("kind"): document for _, document in objects}
    namespace = by_kind.get("Namespace", {})
    deployment = by_kind.get("Deployment", {})
    config_map = by_kind.get("ConfigMap", {})
    service = by_kind.get("Service", {})
    budget = by_kind.get("PodDisruptionBudget", {})
    policy = by_kind.get("NetworkPolicy", {})

    expect((namespace.get("metadata", {}).get("labels") or {}).get("pod-security.kubernetes.io/enforce") == "restricted",
           "the Namespace does not enforce the restricted Pod Security profile")
    names = {document.get("metadata", {}).get("namespace") for kind, document in by_kind.items() if kind != "Namespace"}
    expect(names == {namespace.get("metadata", {}).get("name")}, f"the objects are in {names}, not the Namespace")

    spec = deployment.get("spec", {})
    template = spec.get("template", {})
    pod = template.get("spec", {})
    labels = template.get("metadata", {}).get("labels") or {}
    expect(spec.get("replicas", 1) >= 2, "the Deployment runs fewer than 2 gates")
    expect(selects(spec.get("selector"), labels), "the Deployment's selector does not match its pods' labels")
    pod_security = pod.get("securityContext") or {}
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        expect(not pod.get(key), f"the pod sets {key}")
    expect(pod.get("automountServiceAccountToken") is False, "the pod mounts a service account token")
    volumes = {volume["name"]: volume for volume in pod.get("volumes") or []}
    for volume in volumes.values():
        expect("hostPath" not in volume, f"volume {volume['name']}: hostPath")
        expect("emptyDir" not in volume, f"volume {volume['name']}: a writable emptyDir (the gate writes nothing)")
        # What `podman kube play` can mount (README.md here, "Try it with podman").
        expect("projected" not in volume, f"volume {volume['name']}: projected (podman kube play mounts none)")
        if "secret" in volume:
            expect(volume["secret"].get("optional") is False,
                   f"volume {volume['name']}: optional: false is not stated (podman 4.3 fails without it)")
    containers = (pod.get("initContainers") or []) + (pod.get("containers") or [])
    expect(bool(containers), "the pod has no container")
    for container in containers:
        check_container(container, pod_security)
        for mount in container.get("volumeMounts") or []:
            expect(not mount.get("subPath"), f"container {container.get('name')}: {mount['name']} mounted with subPath "
                   "(never updated in Kubernetes, not mounted by podman kube play before 4.4)")
            if is_secret_volume(volumes.get(mount["name"], {})):
                expect(mount.get("readOnly") is True, f"container {container.get('name')}: Secret {mount['name']} mounted writable")
    for volume in volumes.values():
        if is_secret_volume(volume):
            for mode in modes(volume):
                expect(mode & ~0o440 == 0, f"volume {volume['name']}: mode {mode:o} lets more than owner and group read")

    gate = next((c for c in pod.get("containers") or [] if c.get("name") == "tokengate"), {})
    args = gate.get("args") or []
    expect(args[:2] == ["serve", "--config"] and len(args) == 3, f"the gate's args are {args}, not serve --config FILE")
    config_path = args[2] if len(args) == 3 else ""
    volume, _, name = mounted_file(gate, volumes, config_path)
    expect(volume is not None and volume.get("configMap", {}).get("name") == config_map.get("metadata", {}).get("name")
           and name == SETTINGS_FILE, f"--config {config_path} is not the ConfigMap's {SETTINGS_FILE}")

    text = (config_map.get("data") or {}).get(SETTINGS_FILE, "")
    expect(bool(text), f"the ConfigMap holds no {SETTINGS_FILE}")
    pairs = settings(text)
    listen = last(pairs, "listen", "127.0.0.1:8089")
    gate_port = int(listen.rpartition(":")[2])
    expect(not listen.startswith(("127.", "[::1]", "localhost")), f"listen = {listen}: loopback, unreachable from the Service")
    expect(port_number(gate, "http") == gate_port, f"the container's port http is not the gate's port {gate_port}")
    check_probe(gate, "livenessProbe", "/healthz", gate_port)
    check_probe(gate, "readinessProbe", "/readyz", gate_port)

    keys = [value for key, value in pairs if key == "key"]
    expect(bool(keys), "the settings name no key")
    for path in keys:
        check_secret_file(gate, volumes, path, "key")
    for path in [value for key, value in pairs if key == "session-secret"]:
        check_secret_file(gate, volumes, path, "session-secret")
    replay = last(pairs, "replay", "memory")
    check_replay(replay, gate, volumes)
    expect(last(pairs, "replay-failure", "closed") == "closed", "replay-failure is not closed")
    for door in ("allow-any-requestor", "allow-any-resource", "allow-insecure-keys", "allow-unbound-device", "debugger"):
        expect(last(pairs, door, "false") == "false", f"{door} = true in the settings")

    grace = float(last(pairs, "shutdown-grace", DEFAULT_SHUTDOWN_GRACE))
    timeout = float(last(pairs, "request-timeout", DEFAULT_REQUEST_TIMEOUT))
    termination = pod.get("terminationGracePeriodSeconds", 30)
    expect(termination > grace + timeout,
           f"terminationGracePeriodSeconds {termination} is not longer than shutdown-grace {grace:g} + request-timeout {timeout:g}")

    expect(selects(service.get("spec", {}).get("selector"), labels), "the Service does not select the Deployment's pods")
    for port in service.get("spec", {}).get("ports") or []:
        expect(port_number(gate, port.get("targetPort", port.get("port"))) == gate_port,
               f"the Service's port {port.get('name')} does not reach the gate's port {gate_port}")

    expect(selects(budget.get("spec", {}).get("selector"), labels), "the PodDisruptionBudget does not select the Deployment's pods")
    expect(budget.get("spec", {}).get("minAvailable") == 1, "the PodDisruptionBudget's minAvailable is not 1")

    policy_spec = policy.get("spec", {})
    expect(selects(policy_spec.get("podSelector"), labels), "the NetworkPolicy does not select the Deployment's pods")
    expect(set(policy_spec.get("policyTypes") or []) == {"Ingress", "Egress"}, "the NetworkPolicy does not govern both ways")
    for rule in policy_spec.get("ingress") or []:
        expect(bool(rule.get("from")), "an ingress rule lets in every source")
        ports = rule.get("ports") or []
        expect(bool(ports) and all(port_number(gate, p.get("port")) == gate_port and p.get("protocol", "TCP") == "TCP"
                                   for p in ports), f"an ingress rule opens other than TCP {gate_port}: {ports}")
    for rule in policy_spec.get("egress") or []:
        expect(bool(rule.get("to")), "an egress rule lets out to every destination")
        ports = {(p.get("protocol", "TCP"), p.get("port")) for p in rule.get("ports") or []}
        expect(bool(ports) and ports <= EGRESS_PORTS, f"an egress rule opens other than Redis, Sentinel and DNS: {sorted(ports)}")

    version_file = os.path.join(FOLDER, "..", "..", "Sources", "EntitlementTokens", "Core", "ProductVersion.swift")
    if os.path.exists(version_file):
        with open(version_file, encoding="utf-8") as file:
            version = re.search(r'static let version = "([^"]+)"', file.read())
        kustomization = yaml.safe_load(open(os.path.join(FOLDER, "kustomization.yaml"), encoding="utf-8"))
        tags = {image.get("newTag") for image in kustomization.get("images") or []}
        expect(version is not None and gate.get("image", "").endswith(":" + version.group(1)) and tags <= {version.group(1)},
               f"the image {gate.get('image')} (kustomization.yaml: {sorted(tags)}) is not the version of ProductVersion.swift")

    if problems:
        for problem in problems:
            print(f"check.py: {problem}", file=sys.stderr)
        print(f"deploy/kubernetes: {len(problems)} of {checks} checks failed", file=sys.stderr)
        return 1
    print(f"deploy/kubernetes: {checks} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
