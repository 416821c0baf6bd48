import CDNTokens
import EntitlementTokens
import Synchronization

/// The keys and secrets in use, as `/metrics` shows them after every load
/// (docs/DESIGN.md#key-reloads): `tokengate_key_info{set,fingerprint} 1` for
/// each public key (the trusted token keys, the public halves of the CDN
/// profiles' and CAT keys), and `tokengate_secrets_loaded{set}` counting the
/// shared secrets (session secrets, HMAC and `secure_link` keys), which are
/// never fingerprinted there: a digest of a secret in a scraped series would
/// let whoever reads the metrics test guesses offline.
final class KeyInventory: Sendable {
    struct Set: Sendable {
        var fingerprints: [String] = []
        var secrets = 0
    }

    private let sets = Mutex<[String: Set]>([:])

    /// Replaces what `name` holds (`trusted`, `session`, `cdn`, `cat`).
    func record(_ name: String, _ set: Set) {
        sets.withLock { $0[name] = set }
    }

    func record(trusted keys: [PublicKey]) {
        record("trusted", Set(fingerprints: keys.map(\.sha256Fingerprint)))
    }

    func record(cdn profiles: CDNProfileSet) {
        var set = Set()
        for profile in profiles.profiles {
            let inventory = profile.keyInventory
            set.fingerprints += inventory.publicKeys
            set.secrets += inventory.secrets
        }
        record("cdn", set)
    }

    func record(cat keys: [CATKey]) {
        record("cat", Set(fingerprints: keys.filter { !$0.isSharedSecret }.map(\.fingerprint), secrets: keys.count { $0.isSharedSecret }))
    }

    func record(sessionSecrets count: Int) {
        record("session", Set(secrets: count))
    }

    static let help = [
        "tokengate_key_info": "A public key in use, by set (trusted, cdn, cat) and SHA-256 fingerprint of its SubjectPublicKeyInfo; 1 while in use.",
        "tokengate_secrets_loaded": "Shared secrets in use, by set (session, cdn, cat); counted, never fingerprinted.",
    ]

    func emit(into buffer: inout [UInt8]) {
        let sets = self.sets.withLock { $0 }.sorted { $0.key < $1.key }
        buffer.append(contentsOf: "# HELP tokengate_key_info \(Self.help["tokengate_key_info"]!)\n# TYPE tokengate_key_info gauge\n".utf8)
        for (name, set) in sets {
            for fingerprint in Array(Swift.Set(set.fingerprints)).sorted() {
                buffer.append(contentsOf: "tokengate_key_info{set=\"\(name)\",fingerprint=\"\(fingerprint)\"} 1\n".utf8)
            }
        }
        buffer.append(
            contentsOf: "# HELP tokengate_secrets_loaded \(Self.help["tokengate_secrets_loaded"]!)\n# TYPE tokengate_secrets_loaded gauge\n".utf8
        )
        for (name, set) in sets where name != "trusted" {
            buffer.append(contentsOf: "tokengate_secrets_loaded{set=\"\(name)\"} \(set.secrets)\n".utf8)
        }
    }
}
