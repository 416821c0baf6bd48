import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The shipped Kubernetes manifests run by `podman kube play`
/// (deploy/kubernetes/README.md, "Try it with podman"): the image of
/// ``ImageTests`` (the run's one release build, or `TOKENINSPECT_IMAGE`), a
/// real Redis primary with a replica behind a real Redis Sentinel as the
/// replay store the ConfigMap names, the Secrets made as the guide makes them.
/// ``PlayableManifests`` says what is changed and why (what a cluster supplies:
/// the Sentinel's address, the host's network), ``PlaySecrets`` how the
/// Secrets reach podman, ``Podman`` what this sandbox needs (runc, vfs, the
/// ulimits, here through a containers.conf since `kube play` takes no
/// `--ulimit`).
///
/// Podman plays the pod, not the cluster: it ignores the Namespace, the
/// Service, the PodDisruptionBudget and the NetworkPolicy, runs no readiness
/// probe, and runs the liveness probe as `curl` inside the container (which
/// the image, having no shell, cannot) from a systemd timer (which this
/// sandbox has not); so the test asks the probes' paths itself, as the kubelet
/// would.
@Suite(
    .serialized,
    .holdsMachineLock,
    .timeLimit(.minutes(30)),
    .enabled(if: ReleaseImage.available, ReleaseImage.skipReason),
    .enabled(
        if: Integration.redisHighAvailability,
        "redis-server, redis-sentinel and redis-cli are needed (apt-get install redis-server redis-sentinel redis-tools)"
    )
)
struct KubePlayTests {
    static func random(_ count: Int) -> String {
        String((0..<count).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
    }

    @Test func theShippedManifestsServeThroughPodmanKubePlay() async throws {
        let (file, _) = try await ReleaseImage.archive()
        let redisPassword = Self.random(24)
        let sentinelPassword = Self.random(24)
        let primaryName = try PlayableManifests.primaryName()
        // One replica: the ConfigMap's replay-durability = replicated waits for one.
        let redis = try await offloaded {
            try RedisSentinelGroup(
                primaryName: primaryName,
                replicaCount: 1,
                sentinelCount: 1,
                dataPassword: redisPassword,
                sentinelPassword: sentinelPassword
            )
        }
        defer { redis.remove() }
        let port = try RawHTTP.freePort()
        let manifests = try PlayableManifests(sentinelPort: redis.sentinels[0].port, listenPort: port)
        let secrets = try PlaySecrets(sessionSecret: Self.random(48), redisPassword: redisPassword, sentinelPassword: sentinelPassword)
        // What the kubelet checks before it starts the pod, and podman 4.3 does not:
        // every key a Secret volume's `items` names is in the Secret.
        #expect(Set(manifests.secretItems.keys) == Set(secrets.secrets.keys), "\(manifests.secretItems)")
        for (secret, keys) in manifests.secretItems {
            for key in keys {
                #expect(secrets.secrets[secret]?[key] != nil, "the Deployment mounts \(key) of the Secret \(secret), which has no such key")
            }
        }

        let podman = try Podman()
        defer { podman.remove() }
        let started = Date()
        let loaded = try podman.run(["load", "--input", file.path], timeout: 300).checked()
        #expect(loaded.contains("Loaded image: \(ReleaseImage.name)"), "\(loaded)")
        #expect(manifests.yaml.contains("image: \(ReleaseImage.name)\n"), "the Deployment names another image than \(ReleaseImage.name)")
        try secrets.store(in: podman, folder: podman.folder)
        let play = podman.folder.appendingPathComponent("tokengate.yaml")
        try manifests.yaml.write(to: play, atomically: true, encoding: .utf8)

        let played = try podman.runLeavingContainers(["kube", "play", "--network", "host", play.path])
        #expect(played.status == 0, "\(played.output)")
        let names = try podman.run(["ps", "--all", "--format", "{{.Names}}"]).checked()
            .split(separator: "\n").map(String.init).filter { !$0.hasSuffix("-infra") }
        #expect(names.count == 1, "the gate's containers: \(names)\n\(played.output)")
        guard played.status == 0, let container = names.first else { return }
        let logs = { (try? podman.run(["logs", container]).output) ?? "" }

        // The kubelet's probes, on the paths the Deployment names.
        let live = eventually(within: 60) { try RawHTTP.get(port: port, manifests.livenessPath).status == 200 }
        #expect(live.held, "\(manifests.livenessPath) did not answer 200:\n\(logs().suffix(3000))")
        let ready = eventually(within: 30) { try RawHTTP.get(port: port, manifests.readinessPath).status == 200 }
        let readiness = try? RawHTTP.get(port: port, manifests.readinessPath)
        #expect(ready.held, "\(manifests.readinessPath): \(readiness?.status ?? 0) \(readiness?.body ?? "")\n\(logs().suffix(3000))")
        print(String(format: "kube play: podman load, kube play and %@ 200: %.1f s", manifests.readinessPath, Date().timeIntervalSince(started)))

        // A media token once through the Sentinel-named Redis, then refused as a replay.
        let cli = ["-p", String(redis.primary.port), "--no-auth-warning", "-a", redisPassword]
        func spent() throws -> [String] {
            try Integration.redisCLI(cli + ["--scan", "--pattern", "tokeninspect:replay:*"]).split(separator: "\n").map(String.init)
        }
        let before = try spent()
        let token = try FleetLoad.mediaTokenForms()[2]
        let request = [("X-Original-URI", "/hls/tnt/seg1.ts?token=\(token)"), ("X-Token-Resource", "TNT")]
        let allowed = try RawHTTP.get(port: port, "/v1/auth-request", headers: request)
        #expect(
            allowed.status == 200 && allowed.tokenStatus == "VALID_TOKEN",
            "\(allowed.status) \(allowed.tokenStatus ?? "")\n\(logs().suffix(3000))"
        )
        let after = try spent()
        #expect(
            after.count == before.count + 1,
            "the primary the sentinel names holds no new spent token (the one before is the readiness write check): \(before) then \(after)"
        )
        let replayed = try RawHTTP.get(port: port, "/v1/auth-request", headers: request)
        #expect(replayed.status == 403 && replayed.tokenStatus == "TOKEN_REPLAYED", "\(replayed.status) \(replayed.tokenStatus ?? "")")

        // The container as the Deployment's securityContext says: its user, no
        // capability, no privilege escalation, a read-only root and mounts.
        let inspected = try podman.run(["inspect", "--format", "{{.State.Pid}} {{.HostConfig.ReadonlyRootfs}}", container]).checked()
            .split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(inspected.count == 2 && inspected[1] == "true", "ReadonlyRootfs: \(inspected)")
        let pid = inspected.first ?? "0"
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> [String] {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .map { $0.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().map(String.init) } ?? []
        }
        let user = String(manifests.runAsUser)
        #expect(manifests.runAsUser > 0 && field("Uid") == [user, user, user, user], "Uid: \(field("Uid"))")
        #expect(field("CapEff") == ["0000000000000000"], "CapEff: \(field("CapEff"))")
        #expect(field("NoNewPrivs") == ["1"], "NoNewPrivs: \(field("NoNewPrivs"))")
        let mounts = try String(contentsOfFile: "/proc/\(pid)/mounts", encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ") }
        for path in ["/", "/etc/tokengate/config", "/etc/tokengate/keys", "/etc/tokengate/secrets/session", "/etc/tokengate/secrets/redis"] {
            let mount = mounts.last { $0.count > 3 && $0[1] == path }
            #expect(
                mount.map { $0[3].split(separator: ",").contains("ro") } == true,
                "\(path) is mounted \(mount.map { String($0[3]) } ?? "nowhere")"
            )
        }

        // Down: the pod and its containers go; podman 4.3 keeps the volumes it
        // made for the ConfigMap and the Secrets (`kube down --force` from 4.4
        // removes them), and the Secrets are podman's, so both are removed by name.
        let down = try podman.run(["kube", "down", play.path], timeout: 120)
        #expect(down.status == 0 && down.output.contains("Pods removed"), "\(down.output)")
        #expect(try podman.run(["pod", "ps", "--quiet"]).checked().isEmpty)
        #expect(try podman.run(["ps", "--all", "--quiet"]).checked().isEmpty)
        #expect(!RedisServer.accepts(port: port), "the gate still listens after kube down")
        for volume in try podman.run(["volume", "ls", "--quiet"]).checked().split(separator: "\n") {
            _ = try podman.run(["volume", "rm", String(volume)]).checked()
        }
        for secret in secrets.secrets.keys {
            _ = try podman.run(["secret", "rm", secret]).checked()
        }
        #expect(try podman.run(["volume", "ls", "--quiet"]).checked().isEmpty)
        #expect(try podman.run(["secret", "ls", "--quiet"]).checked().isEmpty)
    }
}
