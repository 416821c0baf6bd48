import CDNTokens
import EntitlementTokens
import FoundationEssentials
import Logging

/// The parts of `tokengate check` read from files: the trusted keys, the
/// session secrets, the CDN profiles and the CAT keys, each loaded the way
/// `serve` loads it (the same loaders, so the same refusals in the same
/// words), but every file on its own, so that one bad file does not hide the next.
/// A secret is described by its path and size, never its content.
enum SetupInspection {
    /// What the options say, and each insecure door they open (a warning: `serve` starts with it).
    static func settings(_ configuration: GateConfiguration) -> SetupReport.Section {
        var section = SetupReport.Section(name: "settings", title: "settings")
        let resource =
            switch configuration.resource {
            case .fixed(let id): "resource \(id)"
            case .header(let name): "resource from the header \(name)"
            case .any: "any resource"
            }
        section.add(
            .ok,
            "",
            "would listen on \(configuration.host):\(configuration.port) (not opened by check); requestor "
                + (configuration.requestorID ?? "any") + "; " + resource
        )
        for door in configuration.insecureSettings { section.add(.warning, "", door) }
        return section
    }

    static func keys(_ configuration: GateConfiguration) -> SetupReport.Section {
        var section = SetupReport.Section(name: "keys", title: "trusted keys (--key)")
        let ring: KeyRing
        do {
            ring = try KeyRing.loadAtStart(paths: configuration.keyPaths, options: configuration.keyLoading)
        } catch {
            section.add(.problem, configuration.keyPaths.joined(separator: ", "), error.message)
            return section
        }
        for key in ring.keys {
            let facts = [
                (name: "algorithm", value: key.algorithm.rawValue), (name: "size", value: size(of: key)),
                (name: "sha256", value: key.sha256Fingerprint),
            ]
            if let warning = Readiness.sampleKeyWarning([key]) {
                section.add(.warning, key.source, warning, facts)
            } else {
                section.add(.ok, key.source, "trusted", facts)
            }
        }
        for notice in ring.notices {
            let headline = KeyNotices.headline(notice.code)
            // A private key beside the public ones is a key that has leaked
            // into a place the service reads: the gate only skips it, the check says fix it.
            let severity: SetupReport.Severity = notice.code == .privateKeySkipped ? .problem : headline.level == .warning ? .warning : .note
            section.add(severity, notice.source, "\(headline.message): \(notice.message)")
        }
        return section
    }

    /// "RSA 2048 bits", "P-256", "Ed25519".
    static func size(of key: PublicKey) -> String {
        switch key.algorithm {
        case .rsaPKCS1SHA256, .rsaPSSSHA256: "RSA \(key.bits) bits"
        case .ecdsaP256SHA256: "P-256"
        case .ed25519: "Ed25519"
        }
    }

    static func sessionSecrets(_ configuration: GateConfiguration) -> SetupReport.Section {
        var section = SetupReport.Section(name: "session-secrets", title: "session secrets (--session-secret)")
        if configuration.sessionSecretPaths.isEmpty {
            section.add(.note, "", "none: playback sessions are off (each HLS or DASH segment needs a token of its own)")
        }
        for path in configuration.sessionSecretPaths {
            let status = try? LibC.status(atPath: path)
            var facts: [(name: String, value: String)] = []
            if let size = status?.size { facts.append((name: "bytes", value: String(size))) }
            var fine = true
            do {
                _ = try PlaybackSessions.load(paths: [path], lifetimeSeconds: configuration.sessionLifetimeSeconds)
            } catch {
                fine = false
                section.add(.problem, path, message(error.message, without: "--session-secret \(path): "), facts)
            }
            if let mode = status?.permissions, mode & 0o077 != 0 {
                let mode8 = String(mode & 0o777, radix: 8)
                let group = status?.groupID
                if mode & 0o007 == 0, let group, group == LibC.effectiveGroupID {
                    // Kubernetes mounts a Secret for a non-root pod through its fsGroup: readable by the
                    // gate's own group, which nobody else in the pod is in.
                    section.add(
                        .warning,
                        path,
                        "readable by its group, the gate's own (mode \(mode8)): "
                            + "as a Kubernetes fsGroup mounts a Secret; outside a pod, make sure nobody else is in that group",
                        facts
                    )
                } else {
                    fine = false
                    section.add(
                        .problem,
                        path,
                        "readable by others (mode \(mode8)): "
                            + "chmod 600 it, owned by the service user, or hand it over with LoadCredential= (docs/DESIGN.md#secrets)",
                        facts
                    )
                }
            }
            if fine { section.add(.ok, path, "usable", facts) }
        }
        return section
    }

    static func cdnProfiles(_ configuration: GateConfiguration) -> SetupReport.Section {
        var section = SetupReport.Section(name: "cdn-profiles", title: "CDN profiles (--cdn-profile)")
        if configuration.cdnProfilePaths.isEmpty { section.add(.note, "", "none: /v1/playback is off") }
        var everyOneLoads = true
        for path in configuration.cdnProfilePaths {
            var one = configuration
            one.cdnProfilePaths = [path]
            do {
                for profile in try CDNProfileLoading.load(one).profiles {
                    section.add(.ok, path, "profile \(profile.name)", [(name: "kind", value: profile.kind.rawValue)])
                    for (line, fingerprint) in zip(profile.settings.keys, profile.keyFingerprints) {
                        var facts = [(name: "file", value: line.path), (name: "sha256", value: fingerprint)]
                        if let id = line.id { facts.insert((name: "id", value: id), at: 0) }
                        section.add(.ok, path, "profile \(profile.name) key", facts)
                    }
                }
            } catch {
                everyOneLoads = false
                section.add(.problem, path, message(message(error.message, without: "--cdn-profile \(path): "), without: "\(path): "))
            }
        }
        // What only the set shows (two profiles of one name), once every file reads.
        if everyOneLoads, configuration.cdnProfilePaths.count > 1 {
            do { _ = try CDNProfileLoading.load(configuration) } catch { section.add(.problem, "", error.message) }
        }
        return section
    }

    static func catKeys(_ configuration: GateConfiguration) -> SetupReport.Section {
        var section = SetupReport.Section(name: "cat-keys", title: "Common Access Token keys (--cat-key)")
        if configuration.catKeys.isEmpty { section.add(.note, "", "none: the auth endpoints read no CAT") }
        for setting in configuration.catKeys {
            do {
                for key in try CATKeyLoading.load([setting]) {
                    var facts = [(name: "kind", value: key.kindDescription), (name: "sha256", value: key.fingerprint)]
                    if let id = key.id { facts.insert((name: "id", value: id), at: 0) }
                    section.add(.ok, setting.path, "usable", facts)
                }
            } catch {
                section.add(.problem, setting.path, message(error.message, without: "--cat-key \(setting.path): "))
            }
        }
        return section
    }

    /// A loader's message without the option and path it starts with, which the finding names already.
    private static func message(_ message: String, without prefix: String) -> String {
        message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : message
    }
}
