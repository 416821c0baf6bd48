import Testing

@testable import CDNTokens

/// Every refusal of the EdgeAuth reader, the key reader and the maker: a typed
/// `INVALID_TOKEN_FORMAT` naming what broke the rule, never a crash.
@Suite struct EdgeAuthHostileInputTests {
    static let mac = String(repeating: "ab", count: 32)

    @Test(
        "the reader refuses a token that breaks a rule, naming the field",
        arguments: [
            ("", "0 bytes"),
            (String(repeating: "a", count: EdgeAuthToken.maximumLength + 1), "4097 bytes"),
            ("exp=1~acl=/a b~hmac=\(mac)", "space"),
            ("exp=1~acl=/\u{e9}~hmac=\(mac)", "non-ASCII"),
            ("exp=1~acl=/a\u{01}~hmac=\(mac)", "control"),
            ("exp=1~acl~hmac=\(mac)", "without '='"),
            ("exp=1~~hmac=\(mac)", "without '='"),
            ("exp=1~foo=bar~hmac=\(mac)", "unknown EdgeAuth field 'foo'"),
            ("exp=1~url=/a~hmac=\(mac)", "unknown EdgeAuth field 'url'"),
            ("exp=1~salt=x~hmac=\(mac)", "unknown EdgeAuth field 'salt'"),
            ("EXP=1~hmac=\(mac)", "unknown EdgeAuth field 'EXP'"),
            ("exp=1~exp=2~hmac=\(mac)", "'exp' appears twice"),
            ("exp=1~acl=/a~acl=/b~hmac=\(mac)", "'acl' appears twice"),
            ("exp=2~st=1~hmac=\(mac)", "'st' after 'exp'"),
            ("acl=/a~exp=1~hmac=\(mac)", "'exp' after 'acl'"),
            ("exp=1~data=x~id=y~hmac=\(mac)", "'id' after 'data'"),
            ("exp=1~hmac=\(mac)~hmac=\(mac)", "'hmac' appears twice"),
            ("exp=1~hmac=\(mac)~id=x", "'id' after hmac"),
            ("exp=1~acl=/a", "without hmac"),
            ("st=1~hmac=\(mac)", "without exp"),
            ("exp=1~id=~hmac=\(mac)", "'id' is empty"),
            ("exp=1~id=a!b~hmac=\(mac)", "'id' holds '!'"),
            ("ip=1.2.3.4!5~exp=1~hmac=\(mac)", "'ip' holds '!'"),
            ("exp=1~data=!~hmac=\(mac)", "'data' holds '!'"),
            ("exp=-1~hmac=\(mac)", "'exp' is not a positive number"),
            ("exp=0~hmac=\(mac)", "'exp' is not a positive number"),
            ("exp=01~hmac=\(mac)", "'exp' is not a positive number"),
            ("exp=+1~hmac=\(mac)", "'exp' is not a positive number"),
            ("exp=1e3~hmac=\(mac)", "'exp' is not a positive number"),
            ("exp=9223372036854775808~hmac=\(mac)", "'exp' is not a positive number"),
            ("st=x~exp=1~hmac=\(mac)", "'st' is not a positive number"),
            ("st=6~exp=5~hmac=\(mac)", "is before its st"),
            ("exp=1~acl=/a!!/b~hmac=\(mac)", "an empty ACL"),
            ("exp=1~acl=/a!~hmac=\(mac)", "an empty ACL"),
            ("exp=1~acl=/a%2~hmac=\(mac)", "not a %XX escape"),
            ("exp=1~acl=/a%zz*~hmac=\(mac)", "not a %XX escape"),
            ("exp=1~hmac=abc", "'hmac' has 3 characters"),
            ("exp=1~hmac=\(String(repeating: "a", count: 63))", "'hmac' has 63 characters"),
            ("exp=1~hmac=\(String(repeating: "A", count: 64))", "not lower-case hex"),
            ("exp=1~hmac=\(String(repeating: "g", count: 40))", "not lower-case hex"),
        ] as [(String, String)]
    )
    func readerRefuses(_ text: String, _ named: String) {
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try EdgeAuthToken(parsing: text) }
    }

    @Test("a token at the length limit is read, and its hmac may be of any of the three digests")
    func limitsAndDigestLengths() throws {
        let filler = String(repeating: "d", count: EdgeAuthToken.maximumLength - "exp=1~data=~hmac=".utf8.count - 64)
        #expect(try EdgeAuthToken(parsing: "exp=1~data=\(filler)~hmac=\(Self.mac)").text.utf8.count == EdgeAuthToken.maximumLength)
        for digits in [64, 40, 32] {
            #expect(try EdgeAuthToken(parsing: "exp=1~hmac=" + String(repeating: "0", count: digits)).hmac.count == digits / 2)
        }
    }

    @Test("a value may hold '=' and early escapes; an ACL may hold '!'-separated patterns")
    func permittedBytes() throws {
        let token = try EdgeAuthToken(parsing: "exp=1~acl=/a/*!/b=c/*~data=x=y%21~hmac=\(Self.mac)")
        #expect(token.data == "x=y%21")
        #expect(token.acl?.map(\.text) == ["/a/*", "/b=c/*"])
    }

    @Test(
        "a key must be hex text of 16 to 256 bytes",
        arguments: [
            ("", "0 bytes"), ("52a152a152a152a152a152a152a152", "15 bytes"), ("52a152a152a152a152a152a152a152a1f", "odd number"),
            ("52a152a152a152a152a152a152a152g1", "not hex"), ("52a152a152a152a1 52a152a152a152a1", "odd number"),
            (String(repeating: "ab", count: 257), "more than 256 bytes"),
        ] as [(String, String)]
    )
    func keyRefused(_ text: String, _ named: String) {
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try EdgeAuthKey(hex: text) }
    }

    @Test("a key file's surrounding white space is skipped, and the key never prints")
    func keyText() throws {
        let key = try EdgeAuthKey(hex: " 52A152a152a152a152a152a152a152a1\n")
        #expect(key.bytes.prefix(2) == [0x52, 0xA1])
        #expect("\(key)" == "EdgeAuthKey(16 bytes)")
    }

    static let key = try! EdgeAuthKey(hex: "52a152a152a152a152a152a152a152a1")

    @Test(
        "the maker refuses what it would have to escape, or what the tool would write broken",
        arguments: [
            (EdgeAuthTokenMaker.Target.acl(["/a~b/*"]), "", "'~'"),
            (.acl(["/a b/*"]), "", "space"),
            (.acl(["/a;b/*"]), "", "';'"),
            (.acl(["/a,b/*"]), "", "','"),
            (.acl(["/a\"b/*"]), "", "'\"'"),
            (.acl(["/a\\b/*"]), "", "'\\'"),
            (.acl(["/a&b/*"]), "", "'&'"),
            (.acl(["/a#b/*"]), "", "'#'"),
            (.acl(["/a!b/*"]), "", "'!'"),
            (.acl(["/caf\u{e9}/*"]), "", "non-ASCII"),
            (.acl([]), "", "at least one ACL"),
            (.acl([""]), "", "empty"),
            (.url(""), "", "URL of 1 to"),
            (.url("/a\u{01}"), "", "control"),
            (.acl(["/a/*"]), "id", "'~'"),
            (.acl(["/a/*"]), "data", "'!'"),
            (.acl(["/a/*"]), "ip", "space"),
            (.acl(["/a/*"]), "long", "longer than the 4096"),
        ] as [(EdgeAuthTokenMaker.Target, String, String)]
    )
    func makerRefuses(_ target: EdgeAuthTokenMaker.Target, _ option: String, _ named: String) {
        var maker = EdgeAuthTokenMaker(key: Self.key)
        maker.endTime = 2_000_000_000
        switch option {
        case "id": maker.sessionID = "a~b"  // quote_plus keeps '~': even early escaping would break the token
        case "data": maker.data = "a!b"
        case "ip": maker.ip = "a b"
        case "long": maker.data = String(repeating: "x", count: EdgeAuthToken.maximumLength)
        default: break
        }
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try maker.make(target, now: 1) }
        if option == "id" {
            maker.escapeEarly = true
            RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try maker.make(target, now: 1) }
        }
    }

    @Test(
        "the maker refuses the times the tool refuses",
        arguments: [
            (Int64?(0), Int64?(10), Int64?.none, "start time"),
            (nil, -1, nil, "end time"),
            (nil, nil, 0, "window"),
            (nil, nil, nil, "end time or a window"),
            (10, 10, nil, "already have expired"),
            (Int64.max, nil, 1, "beyond 64 bits"),
        ] as [(Int64?, Int64?, Int64?, String)]
    )
    func makerTimes(_ start: Int64?, _ end: Int64?, _ window: Int64?, _ named: String) {
        var maker = EdgeAuthTokenMaker(key: Self.key)
        maker.startTime = start
        maker.endTime = end
        maker.windowSeconds = window
        RefusalExpectation.expect(.invalidTokenFormat, naming: named) { _ = try maker.make(.acl(["/*"]), now: 100) }
    }

    @Test("a window without a start runs from now, as the tool's clock")
    func windowFromNow() throws {
        var maker = EdgeAuthTokenMaker(key: Self.key)
        maker.windowSeconds = 300
        let token = try maker.make(.acl(["/*"]), now: 1_000)
        #expect(token.startTime == nil)
        #expect(token.expires == 1_300)
    }
}
