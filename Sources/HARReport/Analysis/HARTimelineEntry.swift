import CDNTokens
import EntitlementTokens

/// What the report keeps of an entry once its credentials are found: no body,
/// no header, no credential value (the URL has them replaced), so a capture of
/// many entries costs a few hundred bytes each.
package struct HARTimelineEntry: Sendable {
    package var number: Int
    package var started: TokenTimestamp?
    package var startedText: String?
    package var method: String
    package var host: String
    /// The path and query with every credential replaced by its marker.
    package var path: String
    /// The whole URL, credentials replaced.
    package var url: String
    package var status: Int
    package var error: String?
    package var credentials: [HARCredential]
    package var skipped: [String]
    /// The answer's `Date` header, read.
    package var serverDate: TokenTimestamp?
    /// Whether the entry shows a `Cookie`, `Set-Cookie` or `Authorization` (headers or cookie lists).
    package var showsCookiesOrAuthorization: Bool
    /// Whether the path names a playlist, a manifest or a media segment.
    package var isMedia: Bool

    /// A refused request: the edge or the gate said no (401, 403), or the gate's status
    /// says so (`VALID_SESSION`, the status of every request a session let through, admits).
    package var isRefused: Bool {
        status == 401 || status == 403 || credentials.contains { $0.kind == .tokenStatus && $0.verdict.isFailure }
    }

    /// A request that got no answer (status 0, `_error`).
    package var failedWithoutAnswer: Bool { status == 0 || error != nil }

    package var sent: [HARCredential] { credentials.filter { $0.place.isSent && $0.kind != .tokenStatus } }
    package var received: [HARCredential] { credentials.filter { !$0.place.isSent && $0.kind != .tokenStatus } }

    init(entry: HAREntry, credentials found: [HARCredential]) {
        number = entry.number
        started = entry.started
        startedText = entry.startedText
        method = entry.method
        status = entry.status
        error = entry.error
        skipped = entry.skipped
        serverDate = entry.responseHeader("date").first.flatMap(HTTPDate.parse)
        let replaced = found.flatMap { credential in credential.values.map { (kind: credential.kind.rawValue, value: $0) } }
        url = HARRedaction.replacing(replaced, in: entry.url)
        if let parsed = try? CDNURL(parsing: entry.url) {
            host = parsed.host
            path = HARRedaction.replacing(replaced, in: parsed.pathAndQuery)
            let lowered = parsed.path.lowercased()
            isMedia = [".m3u8", ".mpd", ".ts", ".m4s", ".mp4", ".aac", ".vtt", ".m4a", ".m4v", ".cmfv", ".cmfa"].contains { lowered.hasSuffix($0) }
        } else {
            host = ""
            path = url
            isMedia = false
        }
        credentials = found.map { credential in
            var kept = credential
            kept.values = []
            return kept
        }
        showsCookiesOrAuthorization =
            !entry.requestCookies.isEmpty || !entry.responseCookies.isEmpty
            || (entry.requestHeaders + entry.responseHeaders).contains { field in
                ["cookie", "set-cookie", "authorization"].contains(field.name.lowercased())
            }
    }
}
