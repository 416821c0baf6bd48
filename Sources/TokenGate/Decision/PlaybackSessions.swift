import EntitlementTokens
import FoundationEssentials

/// Playback sessions (docs/DESIGN.md#playback-sessions) as the gate runs
/// them: the secrets and the lifetime of `--session-secret` and
/// `--session-lifetime`. The credential's format, its tag and what it binds
/// are the library's ``PlaybackSessionSecrets`` (one owner: `tokeninspect
/// har` verifies a capture's sessions with the same code); this type adds the
/// lifetime an issued session gets and the configuration's errors.
struct PlaybackSessions: Sendable {
    typealias Check = PlaybackSessionSecrets.Check
    typealias Expectation = PlaybackSessionSecrets.Expectation
    typealias Binding = PlaybackSessionSecrets.Binding

    let secrets: PlaybackSessionSecrets
    let lifetimeMilliseconds: Int64

    init(secrets: [[UInt8]], lifetimeSeconds: Int) throws(GateConfigurationError) {
        do { self.secrets = try PlaybackSessionSecrets(secrets: secrets) } catch { throw GateConfigurationError(error.message) }
        lifetimeMilliseconds = Int64(lifetimeSeconds) * 1000
    }

    init(secrets: PlaybackSessionSecrets, lifetimeSeconds: Int) {
        self.secrets = secrets
        lifetimeMilliseconds = Int64(lifetimeSeconds) * 1000
    }

    /// Reads each `--session-secret` file whole, by the secret-file rule
    /// (``PlaybackSessionSecrets/load(paths:)``); a relative path that cannot
    /// be read says where it was looked for.
    static func load(paths: [String], lifetimeSeconds: Int) throws(GateConfigurationError) -> PlaybackSessions {
        do {
            return PlaybackSessions(secrets: try PlaybackSessionSecrets.load(paths: paths), lifetimeSeconds: lifetimeSeconds)
        } catch {
            if case .unreadable(let path) = error, !path.hasPrefix("/") {
                // A relative path was not resolved under $CREDENTIALS_DIRECTORY (unset): say where it was looked for.
                throw GateConfigurationError(
                    error.message
                        + " (looked for in the working directory \(FileManager.default.currentDirectoryPath); under systemd a relative path is read from $CREDENTIALS_DIRECTORY)"
                )
            }
            throw GateConfigurationError(error.message)
        }
    }

    /// The 8-byte id a credential records of the key that admitted it.
    static func keyID(of key: PublicKey) -> UInt64 { PlaybackSessionSecrets.keyID(of: key) }

    /// SHA-256 of the value, or 32 zeros when there is none.
    static func binding(_ value: String?) -> [UInt8] { PlaybackSessionSecrets.binding(value) }

    /// A credential for `resource` (nil: the gate checks no resource), the
    /// device that asked, the gate's requestor and the key that verified the
    /// media token, valid from `now` for the lifetime.
    func issue(
        resource: String?,
        deviceID: String?,
        requestor: Binding,
        keyID: UInt64,
        now: TokenTimestamp
    ) -> (credential: String, expires: TokenTimestamp) {
        let expires = now.adding(milliseconds: lifetimeMilliseconds) ?? .latest
        return (secrets.issue(resource: resource, deviceID: deviceID, requestor: requestor, keyID: keyID, expires: expires), expires)
    }

    /// Whether `credential` lets this request through; `trusts` says whether
    /// a key id is in the ring now.
    func check(_ credential: Substring.UTF8View, against expectation: Expectation, trusts: (UInt64) -> Bool) -> Check {
        secrets.check(credential, against: expectation, trusts: trusts)
    }
}
