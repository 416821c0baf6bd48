import CDNTokens
import EntitlementTokens
import Foundation
import Testing

@testable import HARReport

/// `--cat-key` and `--session-secret`: a capture's Common Access Tokens and
/// playback sessions judged with the gate's keys, at each entry's time, and
/// NOT_CHECKED without them; a failure is a finding like any credential's.
@Suite struct HARKeysTests {
    typealias F = HARFixtures

    /// 2026-01-15T12:01:00Z, the fixtures' first entry.
    static let now: Int64 = 1_768_478_460
    static let catKey = try! CATKey(keyFile: try! F.sample("cdn/test-only-cat-hmac.hex"), id: nil, source: "test-only-cat-hmac.hex")
    static let otherKey = try! CATKey(hmacHex: String(repeating: "5a", count: 32), id: nil)
    static let secret = Array(repeating: UInt8(ascii: "s"), count: 32)
    static let secrets = try! PlaybackSessionSecrets(secrets: [secret])

    static func cat(issuedAt: Int64 = now - 10, lifetime: Int64 = 600, key: CATKey = catKey) throws -> String {
        let playlist = try CDNURL(parsing: "https://edge.test/hls/tnt/master.m3u8")
        return try CommonAccessTokenIssuer.issue(
            CDNIssueParameters(url: playlist, scope: .folder, now: issuedAt, lifetime: lifetime, leeway: 0),
            issuer: "tokengate-tests",
            key: key
        )
    }

    static func session(resource: String? = "TNT", expires: Int64 = (now + 3600) * 1000, secrets: PlaybackSessionSecrets = secrets) -> String {
        secrets.issue(resource: resource, deviceID: nil, requestor: "TNT", keyID: 1, expires: TokenTimestamp(millisecondsSince1970: expires)!)
    }

    /// The same credential with one bit of its tag flipped.
    static func tampered(_ credential: String) -> String {
        var bytes = Base64URL.decode(Array(credential.utf8))!
        bytes[bytes.count - 1] ^= 1
        return Base64URL.encode(bytes)
    }

    static func catCapture() throws -> [UInt8] {
        F.har([
            F.entry(url: "https://edge.test/hls/tnt/seg1.ts?cat=\(try cat())"),
            F.entry(
                started: "2026-01-15T12:01:01.000Z",
                url: "https://edge.test/hls/tnt/seg2.ts",
                status: 403,
                requestHeaders: [("CTA-Common-Access-Token", try cat(issuedAt: now - 3600, lifetime: 60))]
            ),
            F.entry(started: "2026-01-15T12:01:02.000Z", url: "https://edge.test/hls/cnn/seg1.ts?cat=\(try cat())", status: 403),
            F.entry(started: "2026-01-15T12:01:03.000Z", url: "https://edge.test/hls/tnt/seg3.ts?cat=\(try cat(key: otherKey))", status: 403),
        ])
    }

    static func sessionCapture() throws -> [UInt8] {
        F.har([
            // The gate's allow, passed through by the site: the playlist's folder is TNT's.
            F.entry(url: "https://site.test/hls/tnt/master.m3u8?tgs=\(session())", responseHeaders: [("X-Token-Resource", "TNT")]),
            F.entry(
                started: "2026-01-15T12:01:01.000Z",
                url: "https://site.test/hls/tnt/seg1.ts",
                status: 401,
                requestHeaders: [("Cookie", "tokengate_session=\(session(expires: (now - 600) * 1000))")]
            ),
            F.entry(
                started: "2026-01-15T12:01:02.000Z",
                url: "https://site.test/hls/tnt/seg2.ts",
                status: 403,
                requestHeaders: [("X-Token-Session", tampered(session()))]
            ),
            F.entry(started: "2026-01-15T12:01:03.000Z", url: "https://site.test/hls/tnt/seg3.ts?tgs=\(session(resource: "CNN"))", status: 403),
        ])
    }

    static func verdicts(_ report: HARReport, _ kind: HARCredentialKind) -> [Int: HARVerdict] {
        Dictionary(report.timeline.flatMap(\.credentials).filter { $0.kind == kind }.map { ($0.entry, $0.verdict) }) { first, _ in first }
    }

    @Test("--cat-key: a valid CAT, an expired one, one outside its folder, a forged one, each judged as the gate's origin would")
    func catsWithTheKey() throws {
        let report = try F.report(try Self.catCapture(), keys: HARKeys(catKeys: [Self.catKey]))
        let verdicts = Self.verdicts(report, .cat)
        #expect(verdicts[1]?.status == "VALID_TOKEN", "\(String(describing: verdicts[1]))")
        #expect(verdicts[1]?.reason.contains("verified with --cat-key") == true)
        #expect(verdicts[2]?.status == "TOKEN_EXPIRED", "\(String(describing: verdicts[2]))")
        #expect(verdicts[3]?.status == "URL_NOT_COVERED", "\(String(describing: verdicts[3]))")
        #expect(verdicts[4]?.status == "INVALID_SIGNATURE", "\(String(describing: verdicts[4]))")
        // Each failure is a finding of its own, naming its entry, first failure first.
        #expect(report.findings.map(\.kind) == ["TOKEN_EXPIRED", "URL_NOT_COVERED", "INVALID_SIGNATURE"])
        #expect(report.findings.map(\.entries) == [[2], [3], [4]])
        #expect(report.hasFailure)
    }

    @Test("without --cat-key a CAT's signature and scope are NOT_CHECKED; only its time is judged")
    func catsWithoutTheKey() throws {
        let report = try F.report(try Self.catCapture())
        let verdicts = Self.verdicts(report, .cat)
        #expect(verdicts[1]?.status == HARVerdict.notChecked)
        #expect(verdicts[1]?.reason.contains("no --cat-key or --profile") == true)
        #expect(verdicts[3]?.status == HARVerdict.notChecked)
        #expect(verdicts[4]?.status == HARVerdict.notChecked)
        #expect(verdicts[2]?.status == "TOKEN_EXPIRED" && verdicts[2]?.reason.contains("signature not checked") == true)
        let refusedButUnjudged = try #require(report.findings.first { $0.entries == [3] })
        #expect(refusedButUnjudged.message.contains("give its key (--cat-key, --profile)"))
    }

    @Test("--session-secret: a valid session, an expired one, a tampered one, one for another resource")
    func sessionsWithTheSecret() throws {
        let report = try F.report(try Self.sessionCapture(), keys: HARKeys(sessionSecrets: Self.secrets))
        let verdicts = Self.verdicts(report, .session)
        #expect(verdicts[1]?.status == "VALID_SESSION", "\(String(describing: verdicts[1]))")
        #expect(verdicts[1]?.reason.contains("bound to this request's resource (TNT)") == true)
        #expect(verdicts[2]?.status == "SESSION_EXPIRED", "\(String(describing: verdicts[2]))")
        #expect(verdicts[2]?.reason.contains("601 s before the entry's time") == true)
        #expect(verdicts[3] == HARVerdict(status: "INVALID_SESSION", reason: "the session credential's tag does not verify"))
        #expect(verdicts[4]?.status == "INVALID_SESSION" && verdicts[4]?.reason.contains("another resource") == true)
        let expires = report.timeline.flatMap(\.credentials).first { $0.entry == 1 && $0.kind == .session }?.expires
        #expect(expires?.millisecondsSince1970 == (Self.now + 3600) * 1000)
        #expect(report.findings.map(\.kind) == ["SESSION_EXPIRED", "INVALID_SESSION", "INVALID_SESSION"])
        #expect(report.findings.map(\.entries) == [[2], [3], [4]])
    }

    @Test("another secret: every session's tag fails; rotation: any of the secrets verifies")
    func sessionsWithOtherSecrets() throws {
        let other = try PlaybackSessionSecrets(secrets: [Array(repeating: UInt8(ascii: "o"), count: 40)])
        let report = try F.report(try Self.sessionCapture(), keys: HARKeys(sessionSecrets: other))
        #expect(Self.verdicts(report, .session).values.allSatisfy { $0.status == "INVALID_SESSION" })
        let rotated = try PlaybackSessionSecrets(secrets: [Array(repeating: UInt8(ascii: "o"), count: 40), Self.secret])
        let again = try F.report(try Self.sessionCapture(), keys: HARKeys(sessionSecrets: rotated))
        #expect(Self.verdicts(again, .session)[1]?.status == "VALID_SESSION")
    }

    @Test("without --session-secret a session is NOT_CHECKED, and its refusal asks for the secret")
    func sessionsWithoutTheSecret() throws {
        let report = try F.report(try Self.sessionCapture())
        let verdicts = Self.verdicts(report, .session)
        #expect(verdicts.count == 4 && verdicts.values.allSatisfy { $0.status == HARVerdict.notChecked })
        #expect(report.findings.first?.message.contains("give its key (--session-secret)") == true)
    }

    @Test("the gate's VALID_SESSION answer is an allow, not a refusal")
    func validSessionStatusIsNotARefusal() throws {
        let report = try F.report(
            F.har([F.entry(url: "https://site.test/hls/tnt/seg1.ts?tgs=\(Self.session())", responseHeaders: [("X-Token-Status", "VALID_SESSION")])]),
            keys: HARKeys(sessionSecrets: Self.secrets)
        )
        #expect(report.timeline.allSatisfy { !$0.isRefused })
        #expect(!report.hasFailure)
    }

    @Test("the text, JSON and HTML reports show the sessions' and CATs' verdicts, and never their values")
    func everyFormatShowsTheVerdicts() throws {
        let keys = HARKeys(catKeys: [Self.catKey], sessionSecrets: Self.secrets)
        for capture in [try Self.sessionCapture(), try Self.catCapture()] {
            let report = try F.report(capture, keys: keys)
            let text = HARReportText(report: report, source: "capture.har").text.rendered
            let json = String(decoding: HARReportJSON.encoded(report), as: UTF8.self)
            let html = String(decoding: HARReportHTML(report: report, source: "capture.har").bytes, as: UTF8.self)
            let statuses = Set(report.timeline.flatMap(\.credentials).map(\.verdict.status))
            #expect(statuses.isSuperset(of: ["INVALID_SESSION"]) || statuses.isSuperset(of: ["URL_NOT_COVERED", "INVALID_SIGNATURE"]))
            for status in statuses {
                #expect(text.contains(status), "text lacks \(status)")
                #expect(json.contains("\"\(status)\""), "JSON lacks \(status)")
                #expect(html.contains(status), "HTML lacks \(status)")
            }
            for value in report.timeline.flatMap(\.credentials).flatMap(\.values) where value.utf8.count >= 12 {
                #expect(!text.contains(value) && !json.contains(value) && !html.contains(value))
            }
        }
    }
}
