/// The outcome of verifying a token. Raw values keep the names of the
/// vendor's Java "Media Token Verifier" so its users feel at home (docs/DESIGN.md#statuses).
public enum VerificationStatus: String, Sendable, Hashable, CaseIterable, Codable {
    case validToken = "VALID_TOKEN"
    case invalidTokenFormat = "INVALID_TOKEN_FORMAT"
    case invalidSignature = "INVALID_SIGNATURE"
    case tokenExpired = "TOKEN_EXPIRED"
    case tokenNotYetValid = "TOKEN_NOT_YET_VALID"
    case invalidRequestorID = "INVALID_REQUESTOR_ID"
    case invalidResourceID = "INVALID_RESOURCE_ID"
    case untrustedMVPD = "UNTRUSTED_MVPD"
    case deviceMismatch = "DEVICE_MISMATCH"
    case tokenReplayed = "TOKEN_REPLAYED"
    /// The one-time-use check could not be made (the replay store is down,
    /// too slow, or refused the write): fail closed, never an acceptance.
    case replayCheckUnavailable = "REPLAY_CHECK_UNAVAILABLE"
}

/// The checks a verdict can report as run or skipped, in the order they run.
public enum VerificationCheck: String, Sendable, Hashable, CaseIterable, Codable {
    case format, signature, expiry, issueTime, requestor, resource, mvpd, device, replay
}
