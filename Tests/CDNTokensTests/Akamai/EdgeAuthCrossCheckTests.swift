import Foundation
import IntegrationSupport
import Testing
import TokenTestSupport

@testable import CDNTokens

/// Live agreement with akamai-edgeauth (module `akamai.edgeauth`), both ways:
/// the tool makes tokens for inputs chosen here and we verify them and make the
/// same bytes; we make tokens and the tool makes the same bytes and recomputes
/// our HMAC. Skipped, naming the package, when the module does not import.
@Suite(.enabled(if: IndependentPython.available(["akamai.edgeauth"]), "pip install akamai-edgeauth==0.3.2"))
struct EdgeAuthCrossCheckTests {
    /// Reads a JSON list of cases on stdin; for each prints the tool's token
    /// and whether the HMAC of `ours` (our token for the case) is the tool's.
    static let script = #"""
        import binascii, hashlib, hmac, json, sys
        from akamai.edgeauth import EdgeAuth
        out = []
        for case in json.load(sys.stdin):
            options = {k: case[k] for k in ("ip", "session_id", "payload", "salt", "start_time", "end_time",
                                            "escape_early", "algorithm") if case.get(k) is not None}
            auth = EdgeAuth(key=case["key"], **options)
            token = auth.generate_url_token(case["url"]) if case.get("url") else auth.generate_acl_token(case["acl"])
            ours = case["ours"]
            body, _, mac = ours.rpartition("~hmac=")
            source = [body]
            if case.get("url"):
                url = case["url"]
                if case.get("escape_early"):
                    url = auth._escape_early(url)
                source.append("url=" + url)
            if case.get("salt"):
                source.append("salt=" + case["salt"])
            expected = hmac.new(binascii.a2b_hex(case["key"]), "~".join(source).encode(),
                                getattr(hashlib, case.get("algorithm", "sha256"))).hexdigest()
            out.append({"token": token, "ours_hmac_ok": hmac.compare_digest(expected, mac)})
        json.dump(out, sys.stdout)
        """#

    struct Case: Encodable {
        var key: String
        var algorithm: String
        var acl: [String]?
        var url: String?
        var ip: String?
        var session_id: String?
        var payload: String?
        var salt: String?
        var start_time: Int64?
        var end_time: Int64
        var escape_early: Bool
        var ours = ""
    }

    struct Answer: Decodable {
        let token: String
        let ours_hmac_ok: Bool
    }

    /// Cases spread over the options by a fixed generator, so a failure repeats.
    static func cases() -> [Case] {
        var generator = SeededGenerator(seed: 0xED6E_A07B)
        let keys = ["52a152a152a152a152a152a152a152a1", "00112233445566778899AABBCCDDEEFF0011", String(repeating: "9f", count: 32)]
        let acls = [["/hls/tnt/*"], ["/*"], ["/a/b.m3u8", "/a/*.ts"], ["%2fhls%2f*"], ["/x/*", "/y/*", "/z/*"]]
        let urls = ["/hls/tnt/master.m3u8", "/vod/movie 1.mp4", "/p?q=1&r=2", "/caf\u{e9}.ts"]
        let texts: [String?] = [nil, "203.0.113.7", "2001:db8::1", "a b/c", "k=v&x!", "plain-text.1"]
        var cases: [Case] = []
        for index in 0..<40 {
            let escape = index % 2 == 0
            let start: Int64? = index % 5 == 0 ? nil : 1_767_225_600 + Int64(generator.next() % 10_000)
            var item = Case(
                key: keys[index % keys.count],
                algorithm: ["sha256", "sha1", "md5"][index % 3],
                start_time: start,
                end_time: (start ?? 1_767_225_600) + 1 + Int64(generator.next() % 86_400),
                escape_early: escape
            )
            if index % 4 == 3 { item.url = urls[Int(generator.next() % UInt64(urls.count))] } else { item.acl = acls[index % acls.count] }
            // Without early escaping only values that need no escaping are written.
            func pick() -> String? {
                let value = texts[Int(generator.next() % UInt64(texts.count))]
                return escape || value.map { !$0.contains(" ") && !$0.contains("!") && !$0.contains("&") } ?? true ? value : "ok"
            }
            item.ip = [nil, "203.0.113.7", "2001:db8::1", "198.51.100.20"][Int(generator.next() % 4)]
            item.session_id = pick()
            item.payload = pick()
            item.salt = index % 3 == 1 ? "salt-\(index)" : nil
            cases.append(item)
        }
        return cases
    }

    static func ourToken(_ item: Case) throws -> EdgeAuthToken {
        var maker = EdgeAuthTokenMaker(key: try EdgeAuthKey(hex: item.key))
        maker.algorithm = try #require(EdgeAuthAlgorithm(rawValue: item.algorithm))
        maker.ip = item.ip
        maker.sessionID = item.session_id
        maker.data = item.payload
        maker.salt = item.salt
        maker.startTime = item.start_time
        maker.endTime = item.end_time
        maker.escapeEarly = item.escape_early
        return try maker.make(item.url.map { .url($0) } ?? .acl(item.acl ?? []), now: 0)
    }

    @Test("the tool and our maker write the same tokens; each verifies the other's")
    func bothWays() throws {
        var cases = Self.cases()
        for index in cases.indices { cases[index].ours = try Self.ourToken(cases[index]).text }
        let output = try IndependentPython.run(Self.script, input: String(decoding: try JSONEncoder().encode(cases), as: UTF8.self))
        let answers = try JSONDecoder().decode([Answer].self, from: Data(output.utf8))
        try #require(answers.count == cases.count)
        for (item, answer) in zip(cases, answers) {
            #expect(answer.token == item.ours, "\(item)")
            #expect(answer.ours_hmac_ok, "the tool recomputes another HMAC for \(item.ours)")
            // The tool's token verifies here, for a URL it covers, at a time inside its life.
            let token = try EdgeAuthToken(parsing: answer.token)
            let path = item.url.map { Self.requestPath($0) } ?? "/z/a.ts".replacingOccurrences(of: "/z/", with: Self.coveredFolder(item.acl ?? []))
            let facts = CDNRequestFacts(
                url: try CDNURL(parsing: "https://edge.example.test" + path),
                now: (item.start_time ?? 1_767_225_600) + 1,
                clientIP: item.ip.map { String(decoding: URLEscaping.percentDecoded($0.utf8), as: UTF8.self) } ?? "192.0.2.1",
                leeway: 0
            )
            let algorithm = try #require(EdgeAuthAlgorithm(rawValue: item.algorithm))
            do {
                try token.verify(key: EdgeAuthKey(hex: item.key), facts: facts, algorithm: algorithm, salt: item.salt)
            } catch {
                Issue.record("\(answer.token) for \(path): \(error)")
            }
        }
    }

    /// `path` as a browser would ask for it: a space and each non-ASCII byte
    /// percent-escaped, the rest as written.
    static func requestPath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            if byte <= 0x20 || byte >= 0x7F { out += String(format: "%%%02X", byte) } else { out.append(Character(Unicode.Scalar(byte))) }
        }
        return out
    }

    /// A folder an ACL of the list covers (the tests' ACLs all allow `<folder>a.ts`).
    static func coveredFolder(_ acl: [String]) -> String {
        switch acl.first {
        case "/hls/tnt/*": "/hls/tnt/"
        case "/a/b.m3u8": "/a/"
        case "%2fhls%2f*": "/hls/"
        case "/x/*": "/x/"
        default: "/"
        }
    }

    @Test("the gate's form is the tool's token with ip, start and end, SHA-256, no salt, no early escaping")
    func gateFormMatchesTheTool() throws {
        let key = "52a152a152a152a152a152a152a152a1"
        var cases: [Case] = []
        var ours: [EdgeAuthToken] = []
        for (index, (url, scope, ip)) in [
            ("https://cdn.example.test/hls/tnt/master.m3u8", CDNScope.folder, "203.0.113.7"),
            ("https://cdn.example.test/vod/a.mp4", .url, nil),
            ("http://cdn.example.test:8080/live/ch-1/index.m3u8", .folder, "2001:db8::7"),
        ].enumerated() {
            let parameters = CDNIssueParameters(
                url: try CDNURL(parsing: url),
                scope: scope,
                now: 1_767_225_600 + Int64(index),
                lifetime: 7200,
                leeway: 30,
                clientIP: ip
            )
            let token = try EdgeAuthIssuer.issue(parameters, key: EdgeAuthKey(hex: key))
            ours.append(token)
            cases.append(
                Case(
                    key: key,
                    algorithm: "sha256",
                    acl: [try EdgeAuthIssuer.acl(for: parameters)],
                    ip: ip,
                    start_time: parameters.now - 30,
                    end_time: parameters.expires,
                    escape_early: false,
                    ours: token.text
                )
            )
        }
        let output = try IndependentPython.run(Self.script, input: String(decoding: try JSONEncoder().encode(cases), as: UTF8.self))
        let answers = try JSONDecoder().decode([Answer].self, from: Data(output.utf8))
        #expect(answers.map(\.token) == ours.map(\.text))
        #expect(answers.allSatisfy { $0.ours_hmac_ok })
    }
}
