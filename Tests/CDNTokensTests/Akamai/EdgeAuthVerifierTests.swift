import Testing

@testable import CDNTokens

/// Each refusal of ``EdgeAuthToken/verify(key:facts:algorithm:salt:)``, with
/// the status and the names its reason must carry.
@Suite struct EdgeAuthVerifierTests {
    static let key = try! EdgeAuthKey(hex: "52a152a152a152a152a152a152a152a1")
    static let now: Int64 = 1_767_225_600

    static func token(
        _ acl: [String] = ["/hls/tnt/*"],
        ip: String? = nil,
        start: Int64? = now,
        end: Int64 = now + 3600,
        algorithm: EdgeAuthAlgorithm = .sha256,
        salt: String? = nil,
        escapeEarly: Bool = false,
        url: String? = nil
    ) throws -> EdgeAuthToken {
        var maker = EdgeAuthTokenMaker(key: key)
        maker.ip = ip
        maker.startTime = start
        maker.endTime = end
        maker.algorithm = algorithm
        maker.salt = salt
        maker.escapeEarly = escapeEarly
        return try maker.make(url.map { .url($0) } ?? .acl(acl), now: now)
    }

    static func facts(_ path: String? = "/hls/tnt/a.ts", now: Int64 = now + 10, ip: String? = nil, leeway: Int64 = 30) throws -> CDNRequestFacts {
        CDNRequestFacts(url: try path.map { try CDNURL(parsing: "https://cdn.example.test" + $0) }, now: now, clientIP: ip, leeway: leeway)
    }

    @Test("a good token verifies, and the proof names the ACL that covered the URL")
    func accepts() throws {
        let verified = try Self.token(["/dash/*", "/hls/tnt/*"]).verify(key: Self.key, facts: Self.facts())
        #expect(verified.coveringACL?.text == "/hls/tnt/*")
        #expect(verified.algorithm == .sha256)
        // Without a URL the scope is not checked.
        #expect(try Self.token().verify(key: Self.key, facts: Self.facts(nil)).coveringACL == nil)
    }

    /// Akamai's EdgeAuth-Token-Node, test/test_local.json ("atk1", "atk2", "atk4"; key
    /// 7a5c2be9…a5a5): its generator writes `st == exp` when no window is given. Such a token is
    /// well formed and valid at no second: expired from `st` on (whatever the leeway), not yet valid before.
    @Test("the node generator's vectors: st == exp is expired, never malformed; the others verify")
    func nodeGeneratorVectors() throws {
        let key = try EdgeAuthKey(hex: "7a5c2be9f42a1f32cd889d1cf775f05d0cd162bd2871d00fe705ab28c9bba5a5")
        let zero = try EdgeAuthToken(
            parsing: "st=1492404013~exp=1492404013~acl=/*~hmac=a77d3cd18e2a08adbc45f844203bb88a9d5057a4e465551b6861f98fb6fecbec"
        )
        RefusalExpectation.expect(.tokenExpired, naming: "valid for no second") {
            try zero.verify(key: key, facts: Self.facts("/a.ts", now: 1_492_404_013))
        }
        RefusalExpectation.expect(.tokenExpired, naming: "valid for no second") {
            try zero.verify(key: key, facts: Self.facts("/a.ts", now: 1_492_404_000, leeway: 30))
        }
        RefusalExpectation.expect(.tokenNotYetValid, naming: "valid for no second") {
            try zero.verify(key: key, facts: Self.facts("/a.ts", now: 1_492_403_000))
        }
        // Its signature is right: another key says so first.
        RefusalExpectation.expect(.invalidSignature) { try zero.verify(key: Self.key, facts: Self.facts("/a.ts", now: 1_492_404_013)) }
        let week = try EdgeAuthToken(
            parsing: "st=1492404013~exp=1493008813~acl=/*~hmac=57cef6aa3c30939b3f599ee7b1bda3bd63c58937ff713d605d5139e449e09a3c"
        )
        try week.verify(key: key, facts: Self.facts("/any/thing.ts", now: 1_492_500_000))
        let two = try EdgeAuthToken(
            parsing: "st=1492404013~exp=1492405000~acl=/path1!/path2~hmac=918aa0dbc9a471967c4996b66e9c7e32b75f9784e4cec520fb45c4c1a56f8253"
        )
        try two.verify(key: key, facts: Self.facts("/path2", now: 1_492_404_500))
        RefusalExpectation.expect(.urlNotCovered) { try two.verify(key: key, facts: Self.facts("/path3", now: 1_492_404_500)) }
    }

    @Test("another key, a changed field, another salt or digest: INVALID_SIGNATURE")
    func invalidSignature() throws {
        let other = try EdgeAuthKey(hex: "62a152a152a152a152a152a152a152a1")
        RefusalExpectation.expect(.invalidSignature, naming: "HMAC-sha256") { try Self.token().verify(key: other, facts: Self.facts()) }
        let widened = try EdgeAuthToken(parsing: try Self.token().text.replacingOccurrences(of: "acl=/hls/tnt/*", with: "acl=/*"))
        RefusalExpectation.expect(.invalidSignature) { try widened.verify(key: Self.key, facts: Self.facts()) }
        RefusalExpectation.expect(.invalidSignature, naming: "salt") {
            try Self.token(salt: "a").verify(key: Self.key, facts: Self.facts(), salt: "b")
        }
        RefusalExpectation.expect(.invalidSignature) { try Self.token(salt: "a").verify(key: Self.key, facts: Self.facts()) }
        // A digest of the same length cannot be told apart by its length: only the MAC refuses it.
        let md5 = try Self.token(algorithm: .md5)
        RefusalExpectation.expect(.invalidTokenFormat, naming: "32 hex digits", "HMAC-sha256 has 64") {
            try md5.verify(key: Self.key, facts: Self.facts())
        }
        RefusalExpectation.expect(.invalidTokenFormat, naming: "HMAC-sha1 has 40") {
            try Self.token().verify(key: Self.key, facts: Self.facts(), algorithm: .sha1)
        }
    }

    @Test("st and exp are checked with the leeway, through the last second")
    func times() throws {
        let token = try Self.token(start: Self.now, end: Self.now + 100)
        RefusalExpectation.expect(.tokenNotYetValid, naming: "\(Self.now) (st)") {
            try token.verify(key: Self.key, facts: Self.facts(now: Self.now - 31))
        }
        try token.verify(key: Self.key, facts: Self.facts(now: Self.now - 30))
        try token.verify(key: Self.key, facts: Self.facts(now: Self.now + 130))
        RefusalExpectation.expect(.tokenExpired, naming: "\(Self.now + 100) (exp)") {
            try token.verify(key: Self.key, facts: Self.facts(now: Self.now + 131))
        }
        RefusalExpectation.expect(.tokenExpired) { try token.verify(key: Self.key, facts: Self.facts(now: Self.now + 101, leeway: 0)) }
        // A leeway near the 64-bit limit does not overflow.
        try Self.token(end: Int64.max - 1).verify(key: Self.key, facts: Self.facts(leeway: Int64.max))
    }

    @Test(
        "a path outside every ACL: URL_NOT_COVERED naming the ACL and the URL",
        arguments: [
            (["/hls/tnt/*"], "/hls/tnt2/a.ts"), (["/hls/tnt/*"], "/hls/tnt"), (["/hls/tnt/master.m3u8"], "/hls/tnt/master.m3u8x"),
            (["/a/*", "/b/*"], "/c/x"), (["%2fhls%2ftnt%2f*"], "/hls/cnn/a.ts"), (["/dash/*.mpd"], "/dash/a.ts"),
        ] as [([String], String)]
    )
    func notCovered(_ acl: [String], _ path: String) throws {
        RefusalExpectation.expect(.urlNotCovered, naming: acl.joined(separator: "!"), "https://cdn.example.test" + path) {
            try Self.token(acl).verify(key: Self.key, facts: Self.facts(path))
        }
    }

    @Test("a bound IP must be the viewer's; an unknown viewer IP never matches")
    func ipBinding() throws {
        let token = try Self.token(ip: "203.0.113.7")
        try token.verify(key: Self.key, facts: Self.facts(ip: "203.0.113.7"))
        RefusalExpectation.expect(.ipMismatch, naming: "203.0.113.7", "198.51.100.1") {
            try token.verify(key: Self.key, facts: Self.facts(ip: "198.51.100.1"))
        }
        RefusalExpectation.expect(.ipMismatch, naming: "unknown") { try token.verify(key: Self.key, facts: Self.facts(ip: nil)) }
        // Early escaped (`2001%3adb8%3a%3a1`), it is compared decoded, and IPv6 hex case does not matter.
        let escaped = try Self.token(ip: "2001:db8::1", escapeEarly: true)
        #expect(escaped.ip == "2001%3adb8%3a%3a1")
        try escaped.verify(key: Self.key, facts: Self.facts(ip: "2001:DB8::1"))
        // An unbound token takes any viewer.
        try Self.token().verify(key: Self.key, facts: Self.facts(ip: nil))
    }

    @Test("a URL-form token verifies against the URL as asked and as early-escaped, and only that URL")
    func urlForm() throws {
        let plain = try Self.token(url: "/vod/a.mp4")
        #expect(try plain.verify(key: Self.key, facts: Self.facts("/vod/a.mp4")).signedURL == "/vod/a.mp4")
        let escaped = try Self.token(escapeEarly: true, url: "/vod/a.mp4")
        #expect(try escaped.verify(key: Self.key, facts: Self.facts("/vod/a.mp4")).signedURL == "%2fvod%2fa.mp4")
        let spaced = try Self.token(escapeEarly: true, url: "/vod/a b.mp4")
        #expect(try spaced.verify(key: Self.key, facts: Self.facts("/vod/a%20b.mp4")).signedURL == "%2fvod%2fa+b.mp4")
        let withQuery = try Self.token(url: "/vod/a.mp4?v=2")
        try withQuery.verify(key: Self.key, facts: Self.facts("/vod/a.mp4?v=2"))
        RefusalExpectation.expect(.invalidSignature, naming: "/vod/b.mp4") { try plain.verify(key: Self.key, facts: Self.facts("/vod/b.mp4")) }
        RefusalExpectation.expect(.urlNotCovered, naming: "no URL") { try plain.verify(key: Self.key, facts: Self.facts(nil)) }
    }
}
