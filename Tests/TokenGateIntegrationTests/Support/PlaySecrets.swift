import Foundation

@testable import GateTestSupport

/// The three Secrets docs/DEPLOY.md has an operator create (`kubectl create
/// secret generic … --from-file`), made here from the test-only sample key, a
/// fresh session secret and the test's Redis passwords, and stored in podman
/// (`podman secret create NAME FILE`, the file a Kubernetes Secret), where
/// `podman kube play` finds a Secret volume's content.
///
/// Podman before 4.4 (Debian 12 ships 4.3.1) writes a Secret's `data` values
/// into the volume's files as they stand, without Base64-decoding them (fixed
/// upstream in 4.4, containers/podman#16269), and ignores `stringData`: for
/// it the values are stored verbatim; from 4.4 on, Base64-encoded as
/// Kubernetes has them.
struct PlaySecrets {
    let secrets: [String: [String: String]]

    init(sessionSecret: String, redisPassword: String, sentinelPassword: String) throws {
        let key = try String(contentsOfFile: GateFixtures.publicKey, encoding: .utf8)
        secrets = [
            "tokengate-keys": [(GateFixtures.publicKey as NSString).lastPathComponent: key],
            "tokengate-session": ["session.key": sessionSecret],
            "tokengate-redis": ["redis.password": redisPassword, "sentinel.password": sentinelPassword],
        ]
    }

    /// Whether this podman writes `data` values as they stand (before 4.4).
    static func verbatim(_ podman: Podman) throws -> Bool {
        let version = try podman.run(["version", "--format", "{{.Client.Version}}"]).checked()
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").compactMap { Int($0) }
        return version.count >= 2 && (version[0], version[1]) < (4, 4)
    }

    /// Every Secret stored in `podman`, from files in `folder`.
    func store(in podman: Podman, folder: URL) throws {
        let verbatim = try Self.verbatim(podman)
        for (name, files) in secrets.sorted(by: { $0.key < $1.key }) {
            let data = files.sorted { $0.key < $1.key }.map { key, value in
                let encoded = verbatim ? value : Data(value.utf8).base64EncodedString()
                return "  \(key): \(Self.quoted(encoded))"
            }
            let document = """
                apiVersion: v1
                kind: Secret
                metadata:
                  name: \(name)
                  namespace: tokengate
                type: Opaque
                data:
                \(data.joined(separator: "\n"))

                """
            let file = folder.appendingPathComponent("\(name).secret.yaml")
            try document.write(to: file, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            _ = try podman.run(["secret", "create", name, file.path]).checked()
        }
    }

    /// A YAML double-quoted scalar (JSON's escapes are YAML's).
    static func quoted(_ value: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [value], options: [.withoutEscapingSlashes])
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}
