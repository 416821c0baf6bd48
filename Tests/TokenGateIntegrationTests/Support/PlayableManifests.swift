import Foundation

@testable import GateTestSupport

/// The shipped `deploy/kubernetes/` manifests as one multi-document YAML for
/// `podman kube play --network host`, changed only where a cluster would
/// supply something the host does not, each change made on the text and
/// required to match exactly once (a manifest that moved on fails here, by
/// name, instead of playing something else):
/// - the Sentinel addresses of the replay URL (cluster DNS names) become the
///   test's sentinel on loopback; the primary's name after `#` stays;
/// - `listen = 0.0.0.0:8089` becomes a free loopback port: on the host's
///   network the pod's address is the host's;
/// - `replicas: 2` becomes 1: two pods on the host's network would want one port;
/// - the container's `ports:` go: podman 4.3 publishes every containerPort,
///   which the host's network refuses ("PortMappings can only be used with
///   Bridge or slirp4netns networking"), and with the host's network there is
///   nothing to publish.
/// The image's name needs no change: `podman load` names it as the manifests do.
struct PlayableManifests {
    struct Mismatch: Error, CustomStringConvertible {
        var description: String
    }

    static let folder = GateFixtures.repository.appendingPathComponent("deploy/kubernetes")

    let yaml: String
    /// What the shipped Deployment says, read from its text.
    let livenessPath: String
    let readinessPath: String
    let runAsUser: Int
    let secretItems: [String: [String]]

    init(sentinelPort: Int, listenPort: Int) throws {
        // In the kustomization's order: the ConfigMap before the Deployment that mounts it.
        let kustomization = try Self.text("kustomization.yaml")
        let resources = kustomization.split(separator: "\n").drop { $0 != "resources:" }.dropFirst()
            .prefix { $0.hasPrefix("  - ") }.map { String($0.dropFirst(4)) }
        guard resources.contains("configmap.yaml"), resources.contains("deployment.yaml") else {
            throw Mismatch(description: "kustomization.yaml lists \(resources), not the ConfigMap and the Deployment")
        }
        var documents: [String] = []
        var deployment = ""
        for resource in resources {
            var text = try Self.text(resource)
            if resource == "configmap.yaml" {
                text = try Self.replacingReplayHosts(in: text, with: "127.0.0.1:\(sentinelPort)")
                text = try Self.replacing("    listen = 0.0.0.0:8089\n", with: "    listen = 127.0.0.1:\(listenPort)\n", in: text, resource)
            }
            if resource == "deployment.yaml" {
                deployment = text
                text = try Self.replacing("  replicas: 2\n", with: "  replicas: 1\n", in: text, resource)
                text = try Self.removingBlock("          ports:\n", in: text, resource)
            }
            documents.append(text)
        }
        yaml = documents.joined(separator: "\n---\n")
        livenessPath = try Self.probePath("livenessProbe", in: deployment)
        readinessPath = try Self.probePath("readinessProbe", in: deployment)
        guard let user = Self.firstMatch(#"\n {10}securityContext:\n(?: {12}.*\n)*? {12}runAsUser: (\d+)\n"#, in: deployment).flatMap(Int.init) else {
            throw Mismatch(description: "deployment.yaml: the container states no runAsUser")
        }
        runAsUser = user
        secretItems = Self.secretItems(in: deployment)
    }

    /// The primary's name after `#` in the shipped replay URL: the test's sentinels monitor it by that name.
    static func primaryName() throws -> String {
        let lines = try text("configmap.yaml").split(separator: "\n").filter { $0.hasPrefix("    replay = ") }
        guard lines.count == 1, let name = lines[0].split(separator: "#").dropFirst().last else {
            throw Mismatch(description: "configmap.yaml: \(lines.count) replay = lines, not one naming #primary")
        }
        return String(name)
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }

    static func replacing(_ old: String, with new: String, in text: String, _ file: String) throws -> String {
        let count = text.components(separatedBy: old).count - 1
        guard count == 1 else {
            throw Mismatch(description: "\(file): \(old.trimmingCharacters(in: .whitespacesAndNewlines)) found \(count) times, not once")
        }
        return text.replacingOccurrences(of: old, with: new)
    }

    /// `    replay = redis-sentinel://HOSTS/…` with HOSTS replaced.
    static func replacingReplayHosts(in text: String, with hosts: String) throws -> String {
        let prefix = "    replay = redis-sentinel://"
        let lines = text.components(separatedBy: "\n")
        let matching = lines.indices.filter { lines[$0].hasPrefix(prefix) }
        guard matching.count == 1, let slash = lines[matching[0]].dropFirst(prefix.count).firstIndex(of: "/") else {
            throw Mismatch(
                description: "configmap.yaml: \(matching.count) lines start with \(prefix.trimmingCharacters(in: .whitespaces)), not one with a /"
            )
        }
        var changed = lines
        changed[matching[0]] = prefix + hosts + lines[matching[0]][slash...]
        return changed.joined(separator: "\n")
    }

    /// `header` and the lines after it indented deeper than it.
    static func removingBlock(_ header: String, in text: String, _ file: String) throws -> String {
        _ = try replacing(header, with: "", in: text, file)
        let indent = header.prefix { $0 == " " }.count
        var lines = text.components(separatedBy: "\n")
        let start = lines.firstIndex(of: String(header.dropLast()))!
        var end = start + 1
        let item = String(repeating: " ", count: indent) + "- "
        while end < lines.count, lines[end].prefix(while: { $0 == " " }).count > indent || lines[end].hasPrefix(item) {
            end += 1
        }
        lines.removeSubrange(start..<end)
        return lines.joined(separator: "\n")
    }

    static func probePath(_ probe: String, in deployment: String) throws -> String {
        guard let path = firstMatch(#"\n +\#(probe):\n +httpGet:\n +path: (\S+)\n"#, in: deployment) else {
            throw Mismatch(description: "deployment.yaml: no \(probe) with an httpGet path")
        }
        return path
    }

    /// Each Secret volume's Secret and the keys its `items` name (the kubelet
    /// refuses a key the Secret lacks; podman 4.3 ignores `items`).
    static func secretItems(in deployment: String) -> [String: [String]] {
        var items: [String: [String]] = [:]
        var secret: String?
        for line in deployment.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("secretName: ") {
                secret = String(line.dropFirst("secretName: ".count))
                items[secret!, default: []] = []
            } else if line.hasPrefix("- name: ") {
                secret = nil
            } else if let name = secret, line.hasPrefix("- key: ") {
                items[name, default: []].append(String(line.dropFirst("- key: ".count)))
            }
        }
        return items
    }

    static func firstMatch(_ pattern: String, in text: String) -> String? {
        guard let expression = try? NSRegularExpression(pattern: pattern),
            let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            match.numberOfRanges > 1, let range = Range(match.range(at: 1), in: text)
        else { return nil }
        return String(text[range])
    }
}
