// Snippets of docs/LIBRARY.md and the DocC article, compiled as written. Run with
// a key and a token to try them: `swift run ServerVerification KEY TOKEN RESOURCE`.
import EntitlementTokens

// MARK: docs/LIBRARY.md — Adding it

// snippet: library-guide
// Once, at start-up: keys are parsed once; the verifier is Sendable and shared.
let ring = try KeyRing.load(paths: [CommandLine.arguments.dropFirst().first ?? "/etc/media/issuer.pem"])
let verifier = TokenVerifier(signature: .trustedKeys(ring),
    policy: VerificationPolicy(requestorID: "TNT", allowedMVPDs: ["Comcast_SSO"], replayStore: InMemoryReplayStore()))

// Per request: what this request is for, and from which device.
func authorizePlayback(token: String, resource: String, deviceID: String?) async -> Bool {
    let verdict = await verifier.verify(token, expecting: RequestExpectations(
        resourceID: resource, device: deviceID.map { .deviceID($0) }))
    guard let proof = verdict.verified else {
        print("playback refused: \(verdict)")   // status and reason, escaped for a log line
        return false
    }
    print("playback allowed: \(proof)")         // kind, requestor, resource, expiry, key
    return true
}
// end snippet

// MARK: DocC — a replay store shared by a fleet

// snippet: docc-store
/// A replay store over your shared cache. `accept` may wait for the network;
/// it says `.unavailable` when it cannot decide, and the verdict is then
/// `REPLAY_CHECK_UNAVAILABLE` (fail closed), never an acceptance.
struct SharedCacheReplayStore: ReplayStore {
    let setIfAbsent: @Sendable (_ key: [UInt8], _ expiresAtMilliseconds: Int64) async throws -> Bool

    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        do {
            return try await setIfAbsent(identity.digest, until.millisecondsSince1970) ? .accepted : .replayed
        } catch {
            return .unavailable("shared cache: \(error)")
        }
    }
}
// end snippet

// snippet: docc-http
/// One request: the token, the resource it asks for, the device it comes from.
func answer(token: String, resource: String, deviceID: String?, with verifier: TokenVerifier) async -> Int {
    let verdict = await verifier.verify(token, expecting: RequestExpectations(
        resourceID: resource, device: deviceID.map { .deviceID($0) }))
    switch verdict.status {
    case .validToken: return 200
    case .invalidTokenFormat, .tokenExpired, .tokenNotYetValid: return 401
    case .replayCheckUnavailable: return 503
    default: return 403
    }
}
// end snippet

// snippet: docc-rotation
/// Key rotation without a restart: the new ring replaces the old one for every
/// verification that starts after it; a reload that fails keeps the old keys.
func reloadKeys(of verifier: TokenVerifier, from paths: [String]) {
    do {
        let ring = try verifier.reloadKeys(paths: paths)
        print("trusting \(ring.keys.count) keys")
    } catch {
        print("key reload failed, the old keys stay: \(error.message)")
    }
}
// end snippet

if CommandLine.arguments.count >= 4 {
    let allowed = await authorizePlayback(token: CommandLine.arguments[2], resource: CommandLine.arguments[3], deviceID: nil)
    print(allowed ? "allowed" : "refused")
}
