import EntitlementTokens
import Hummingbird

/// What the debugger's page asks a token to be checked against, from the
/// query of `POST /debugger/report`: `resource`, `requestor`, `mvpd`
/// (repeatable), `device-id` or `fingerprint`, `now` (the one reading of
/// ``TokenDateParser/parseNow(_:)``: ISO 8601, or an epoch number by
/// magnitude), `leeway` (seconds). Every one is optional:
/// a check without its expectation is skipped, and the report says so.
///
/// Only the debugger's own route reads these. The production routes of
/// `serve` (`/v1/*`) keep the gate's requestor, MVPD list and leeway, so a
/// caller of the production API can never choose what it is checked against.
struct DebuggerExpectations: Sendable {
    var request: RequestExpectations
    var requestorID: String?
    var allowedMVPDs: [String]?
    var leewayMilliseconds: Int64
    /// nil: the server's clock at the time of the request.
    var now: TokenTimestamp?
    /// How an epoch "now" was read (seconds or milliseconds, by its digits),
    /// for the page to say as the CLI's note does; nil for a date or no "now".
    var nowEpochUnit: TokenDateParser.EpochUnit?

    static let defaultLeewayMilliseconds: Int64 = 30_000

    struct Invalid: Error, Sendable {
        var reason: String
    }

    init(query: Parameters) throws(Invalid) {
        func value(_ name: String) -> String? {
            guard let text = query.get(name), !text.isEmpty else { return nil }
            return text
        }
        let device: DeviceExpectation?
        switch (value("device-id"), value("fingerprint")) {
        case (let id?, nil): device = .deviceID(id)
        case (nil, let fingerprint?): device = .fingerprint(fingerprint)
        case (nil, nil): device = nil
        case (_?, _?): throw Invalid(reason: "give device-id or fingerprint, not both")
        }
        request = RequestExpectations(resourceID: value("resource"), device: device)
        requestorID = value("requestor")
        let mvpds = query.getAll("mvpd").filter { !$0.isEmpty }
        allowedMVPDs = mvpds.isEmpty ? nil : mvpds
        if let text = value("leeway") {
            guard let seconds = Double(text), seconds.isFinite, (0...86_400).contains(seconds) else {
                throw Invalid(reason: "leeway must be a number of seconds between 0 and 86400")
            }
            leewayMilliseconds = Int64((seconds * 1000).rounded())
        } else {
            leewayMilliseconds = Self.defaultLeewayMilliseconds
        }
        if let text = value("now") {
            do {
                (now, nowEpochUnit) = try TokenDateParser.parseNow(text)
            } catch {
                throw Invalid(reason: "now: \(error)")
            }
        } else {
            now = nil
            nowEpochUnit = nil
        }
    }

    /// The policy for one request: no replay store, ever (inspecting a
    /// captured media token must not spend its one use), and this "now".
    func policy(now: TokenTimestamp) -> VerificationPolicy {
        VerificationPolicy(
            requestorID: requestorID,
            allowedMVPDs: allowedMVPDs,
            leewayMilliseconds: leewayMilliseconds,
            replayStore: nil,
            clock: { now }
        )
    }
}
