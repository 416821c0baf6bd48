import CDNTokens
import EntitlementTokens
import Testing

@testable import HARReport

/// The report of a capture: verdicts at each entry's time, the chain, and
/// the findings, first failure first, one cause one finding.
@Suite struct HARAnalysisTests {
    typealias F = HARFixtures

    static func sampleReport(keys: HARKeys = HARKeys()) throws -> HARReport {
        try F.report(try F.sample("har/cookie-expired.har"), keys: keys)
    }

    @Test("the timeline sorts by startedDateTime and keeps the file's numbers")
    func timelineOrder() throws {
        let report = try Self.sampleReport()
        #expect(report.timeline.map(\.number) == [1, 2, 3, 4, 5, 7, 6, 8])
        #expect(report.firstTime?.iso8601 == "2026-01-15T12:01:00Z")
    }

    @Test("without a key nothing is valid: NOT_CHECKED, with the time still judged")
    func noKeyIsNotValid() throws {
        let report = try Self.sampleReport()
        let verdicts = report.timeline.flatMap(\.credentials).filter { $0.kind != .tokenStatus }.map(\.verdict.status)
        #expect(!verdicts.isEmpty)
        #expect(verdicts.allSatisfy { $0 == HARVerdict.notChecked }, "\(verdicts)")
    }

    @Test("with the keys, each credential is judged at its entry's time")
    func withKeys() throws {
        let ring = try KeyRing.load(paths: [F.packageRoot.appendingPathComponent("Samples/keys/trusted").path])
        let profile = try CDNProfileSet.load(
            paths: [F.packageRoot.appendingPathComponent("Samples/cdn/nginx-secure-link.profile").path],
            defaults: CDNProfileDefaults(lifetime: 14_400, leeway: 30),
            credentialsDirectory: F.packageRoot.path
        ).profiles
        let report = try Self.sampleReport(keys: HARKeys(tokenKeys: ring, profiles: profile))
        let media = report.timeline.flatMap(\.credentials).filter { $0.kind == .mediaToken }
        #expect(media.map(\.verdict.status) == ["VALID_TOKEN", "VALID_TOKEN"])
        let sent = report.timeline.flatMap(\.sent).filter { $0.kind == .nginxSecureLink }
        #expect(sent.count == 4 && sent.allSatisfy { $0.verdict.status == "VALID_TOKEN" }, "\(sent.map(\.verdict))")
    }

    @Test("the chain: the media token's exchange issued the cookie, which covered the playlist and three segments until its Max-Age")
    func chain() throws {
        let report = try Self.sampleReport()
        #expect(report.chain.count == 1)
        let link = try #require(report.chain.first)
        #expect(link.issuedBy == 1 && link.kind == .nginxSecureLink && link.mediaToken != nil)
        #expect(link.covered == [2, 3, 4, 5] && link.refused.isEmpty)
    }

    @Test("findings: the expired cookie first (its retry under it), then the reused media token; exit-worthy")
    func findings() throws {
        let report = try Self.sampleReport()
        #expect(report.findings.map(\.kind) == ["COOKIE_EXPIRED", "TOKEN_REUSED"])
        #expect(report.findings[0].entries == [7, 6])
        #expect(report.findings[0].message.contains("issued by #1 with a lifetime of 60 s expired at 2026-01-15T12:02:00Z"))
        #expect(report.findings[1].entries == [8])
        #expect(report.findings[1].message.contains("sent by #1, #8"))
        #expect(report.hasFailure)
    }

    @Test("a device clock off by more than the leeway is a finding naming by how much")
    func clockSkew() throws {
        let entries = (0..<3).map { index in
            F.entry(
                started: "2026-01-15T12:0\(index):00.000Z",
                url: "https://a.test/\(index)",
                responseHeaders: [("Date", "Thu, 15 Jan 2026 11:5\(7 + index):00 GMT")]
            )
        }
        let report = try F.report(F.har(entries))
        let finding = try #require(report.findings.first { $0.kind == "CLOCK_SKEW" })
        #expect(finding.message.contains("180 s ahead of"))
        #expect(finding.entries == [1, 2, 3] && !finding.isFailure)
    }

    @Test("a sanitized HAR is said so, and no player is blamed for the missing cookies")
    func sanitized() throws {
        let exchange = F.entry(
            method: "POST",
            url: "https://gate.example.test/v1/playback",
            body:
                "{\"url\":\"https://edge.example.test/hls/tnt/master.m3u8\",\"cookies\":[{\"name\":\"tg_md5\",\"value\":\"XFGrayT_cEdaNdjae509gA\",\"maxAge\":14400,\"path\":\"/hls/tnt/\",\"domain\":\"edge.example.test\"},{\"name\":\"tg_expires\",\"value\":\"1768492800\",\"maxAge\":14400}]}"
        )
        let segments = (1...3).map {
            F.entry(started: "2026-01-15T12:01:0\($0).000Z", url: "https://edge.example.test/hls/tnt/seg\($0).ts", mimeType: "video/mp2t")
        }
        let refused = F.entry(started: "2026-01-15T12:01:09.000Z", url: "https://other.example.test/x.ts", status: 403)
        let report = try F.report(F.har([exchange] + segments + [refused]))
        #expect(report.findings.map(\.kind) == ["SANITIZED"])
        #expect(!report.hasFailure)
    }

    @Test("a request that dropped the credential the earlier ones carried is CREDENTIAL_DROPPED")
    func dropped() throws {
        let token = "st=1768478370~exp=1768492800~acl=/hls/tnt/*~hmac=468687acabd42d9760a1a8a08108cb4dd8888f8058a478818de3e78fa7ebbbae"
        let report = try F.report(
            F.har([
                F.entry(url: "https://akamai.example.test/hls/tnt/a.ts", requestHeaders: [("Cookie", "hdnts=\(token)")]),
                F.entry(started: "2026-01-15T12:01:04.000Z", url: "https://akamai.example.test/hls/tnt/b.ts", status: 403),
                F.entry(started: "2026-01-15T12:01:05.000Z", url: "https://akamai.example.test/hls/tnt/b.ts", status: 403),
            ])
        )
        #expect(report.findings.map(\.kind) == ["CREDENTIAL_DROPPED"])
        #expect(report.findings[0].entries == [2, 3])
    }

    /// As a browser captured by mitmproxy plays: the exchange's 303 sets the
    /// secure_link cookies for `Path=/hls/tnt/`, a segment there carries them,
    /// and a slate the playlist names in another folder goes out bare (the
    /// browser rightly keeps the cookies back) and is refused.
    @Test("a refused request outside the folder its host's cookies cover is URL_NOT_COVERED, not a player that dropped them")
    func outsideTheCookiesFolder() throws {
        let cookies = ["tg_md5=XFGrayT_cEdaNdjae509gA", "tg_expires=1768492800"]
        let exchange = F.entry(
            url: "http://gate.media.test/v1/playback?resource=TNT",
            status: 303,
            responseHeaders: [("Location", "http://edge.media.test/hls/tnt/master.m3u8")]
                + cookies.map { ("Set-Cookie", "\($0); Domain=media.test; Path=/hls/tnt/; Max-Age=14400; HttpOnly") }
        )
        let segment = F.entry(
            started: "2026-01-15T12:01:01.000Z",
            url: "http://edge.media.test/hls/tnt/seg1.ts",
            requestHeaders: [("Cookie", cookies.joined(separator: "; "))]
        )
        let slate = F.entry(started: "2026-01-15T12:01:02.000Z", url: "http://edge.media.test/hls/slate/slate.ts", status: 403)
        let retry = F.entry(started: "2026-01-15T12:01:03.000Z", url: "http://edge.media.test/hls/slate/slate.ts", status: 403)
        let report = try F.report(F.har([exchange, segment, slate, retry]))
        #expect(report.findings.map(\.kind) == ["URL_NOT_COVERED"], "\(report.findings.map(\.message))")
        #expect(report.findings.first?.entries == [3, 4])
        #expect(report.findings.first?.message.contains("/hls/tnt/") == true)
    }

    /// As ffmpeg captured by mitmproxy plays the manifest route: a segment carries
    /// its query token, and a URI of another folder (which the gate wrote no token
    /// into) goes out bare; with the profile, its folder is under none of its
    /// resources'. A sanitized export of the same says the same.
    @Test("with the profile, a refused request under none of its resources' folders is URL_NOT_COVERED")
    func outsideTheProfilesFolders() throws {
        let profiles = try CDNProfileSet.load(
            paths: [F.packageRoot.appendingPathComponent("Samples/cdn/nginx-secure-link.profile").path],
            defaults: CDNProfileDefaults(lifetime: 14_400, leeway: 30),
            credentialsDirectory: F.packageRoot.path
        ).profiles
        let report = try F.report(
            F.har([
                F.entry(url: "https://edge.example.test/hls/tnt/seg1.ts?md5=XFGrayT_cEdaNdjae509gA&expires=1768492800"),
                F.entry(started: "2026-01-15T12:01:02.000Z", url: "https://edge.example.test/hls/slate/slate.ts", status: 403),
            ]),
            keys: HARKeys(profiles: profiles)
        )
        #expect(report.findings.map(\.kind) == ["URL_NOT_COVERED"], "\(report.findings.map(\.message))")
        #expect(report.findings.first?.entries == [2])
        // Without the profile nothing says which folders its tokens cover: a player that dropped the token.
        let blind = try F.report(
            F.har([
                F.entry(url: "https://edge.example.test/hls/tnt/seg1.ts?md5=XFGrayT_cEdaNdjae509gA&expires=1768492800"),
                F.entry(started: "2026-01-15T12:01:02.000Z", url: "https://edge.example.test/hls/slate/slate.ts", status: 403),
            ])
        )
        #expect(blind.findings.map(\.kind) == ["CREDENTIAL_DROPPED"])
    }

    /// As ffmpeg captured by mitmproxy plays the manifest route: every playlist
    /// the session lets through is 200 with `X-Token-Status: VALID_SESSION`.
    @Test("a request the gate let through on its session (VALID_SESSION) is not a refusal")
    func validSession() throws {
        let report = try F.report(
            F.har([
                F.entry(
                    url: "http://gate.example.test/v1/manifest/live/tnt/master.m3u8?tgs=c2Vzc2lvbi1vbmUtdHdvLXRocmVl",
                    responseHeaders: [("X-Token-Status", "VALID_SESSION")],
                    mimeType: "application/vnd.apple.mpegurl"
                )
            ])
        )
        #expect(report.findings.isEmpty, "\(report.findings.map(\.message))")
        #expect(report.timeline.allSatisfy { !$0.isRefused })
    }

    @Test("a request that failed without an answer is shown as such")
    func failedRequest() throws {
        let report = try F.report(F.har([F.entry(url: "https://a.test/x.ts", status: 0, extra: ",\"_error\":\"net::ERR_CONNECTION_RESET\"")]))
        #expect(report.findings.map(\.kind) == ["REQUEST_FAILED"])
        #expect(report.findings[0].message.contains("net::ERR_CONNECTION_RESET"))
    }

    @Test("an EdgeAuth token in a URL is found, replaced in the URL shown, and judged at the entry's time")
    func queryToken() throws {
        let url = try String(decoding: F.sample("cdn/akamai-url.txt"), as: UTF8.self).split(separator: "\n")[0]
        let late = F.entry(started: "2026-01-15T17:00:00.000Z", url: String(url), status: 403)
        let report = try F.report(F.har([F.entry(url: String(url)), late]))
        let credentials = report.timeline.flatMap(\.credentials)
        #expect(credentials.map(\.kind) == [.akamai, .akamai])
        #expect(credentials.map(\.verdict.status) == [HARVerdict.notChecked, "TOKEN_EXPIRED"])
        #expect(report.timeline[0].url.hasPrefix("https://akamai.example.test/hls/tnt/master.m3u8?__token__=REDACTED-akamai-"))
        #expect(!report.timeline[0].url.contains("hmac"))
        #expect(report.findings.map(\.kind) == ["TOKEN_EXPIRED"])
    }
}
