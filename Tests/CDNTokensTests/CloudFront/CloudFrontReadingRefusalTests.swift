import CDNTokens
import EntitlementTokens
import Foundation
import Testing

/// Every refusal of the readers: CloudFront's Base64, the query and cookie
/// parameters, and the policy. Each is a typed `INVALID_TOKEN_FORMAT` whose
/// reason names what failed.
@Suite("CloudFront reading refusals")
struct CloudFrontReadingRefusalTests {
    static let signature = CloudFrontBase64.encode([UInt8](repeating: 7, count: 256))
    static let policyBytes = Array(
        #"{"Statement":[{"Resource":"https://h.example/*","Condition":{"DateLessThan":{"AWS:EpochTime":2000000000}}}]}"#.utf8
    )
    static let policyText = CloudFrontBase64.encode(policyBytes)

    static func custom(_ extra: [CDNField] = []) -> [CDNField] {
        [CDNField("Policy", policyText), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K2JCJMDEHXQW5F")] + extra
    }

    // MARK: - Base64

    @Test("CloudFront Base64 round-trips every length", arguments: 0..<40)
    func base64RoundTrips(_ count: Int) throws {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) }
        let text = CloudFrontBase64.encode(bytes)
        #expect(!text.contains("+") && !text.contains("/") && !text.contains("="))
        if count > 0 { #expect(try CloudFrontBase64.decode(text, field: "f") == bytes) }
    }

    @Test("CloudFront Base64 writes botocore's three substitutions")
    func base64Substitutions() {
        // Standard Base64 of fb ff bf is "+/+/", of ff is "/w==".
        #expect(CloudFrontBase64.encode([0xFB, 0xFF, 0xBF]) == "-~-~")
        #expect(CloudFrontBase64.encode([0xFF]) == "~w__")
    }

    @Test(
        "CloudFront Base64 is read strictly",
        arguments: [
            ("", "is empty"),
            ("abc", "not a multiple of 4"),
            ("ab+c", "outside A–Z"),
            ("ab/c", "outside A–Z"),
            ("ab==", "outside A–Z"),
            ("a%2B", "outside A–Z"),
            ("ab c", "outside A–Z"),
            ("a_bc", "padding '_'"),
            ("ab_c", "padding '_'"),
            ("~x__", "not canonical"),
            ("____", "padding '_'"),
        ]
    )
    func base64Refusals(_ input: String, _ reason: String) {
        #expect(
            Self.refusal { _ = try CloudFrontBase64.decode(input, field: "Policy") }?.contains(reason) == true,
            "\(input) was not refused for \(reason)"
        )
    }

    @Test("an over-long Base64 value is refused before decoding")
    func base64TooLong() {
        let long = String(repeating: "A", count: CloudFrontBase64.maximumLength + 4)
        #expect(Self.refusal { _ = try CloudFrontBase64.decode(long, field: "Policy") }?.contains("over the limit") == true)
    }

    // MARK: - Parameters

    @Test("a custom token reads, and its fields name the policy's conditions")
    func readsCustom() throws {
        let token = try CloudFrontToken(queryPairs: [CDNField("a", "1")] + Self.custom())
        #expect(token.carrier == .query)
        #expect(token.hashAlgorithm == nil)
        #expect(token.expires == 2_000_000_000)
        #expect(token.fields.map(\.name) == ["Policy", "Signature", "Key-Pair-Id", "Resource", "DateLessThan"])
        #expect(try CloudFrontToken(queryPairs: token.pairs) == token)
        let cookie = token.carried(by: .cookie)
        #expect(cookie.pairs.map(\.name) == ["CloudFront-Policy", "CloudFront-Signature", "CloudFront-Key-Pair-Id"])
        #expect(try CloudFrontToken(cookiePairs: cookie.pairs) == cookie)
    }

    @Test(
        "query and cookie parameters are refused by rule",
        arguments: [
            (custom([CDNField("Signature", signature)]), "'Signature' appears twice"),
            (custom([CDNField("Key-Pair-Id", "OTHER")]), "'Key-Pair-Id' appears twice"),
            (custom([CDNField("Expires", "2000000000")]), "both 'Expires'"),
            ([CDNField("Signature", signature), CDNField("Key-Pair-Id", "K")], "neither 'Expires' nor 'Policy'"),
            ([CDNField("Expires", "2000000000"), CDNField("Key-Pair-Id", "K")], "no 'Signature'"),
            ([CDNField("Expires", "2000000000"), CDNField("Signature", signature)], "no 'Key-Pair-Id'"),
            (custom([CDNField("Hash-Algorithm", "sha256")]), "neither SHA1 nor SHA256"),
            (custom([CDNField("Hash-Algorithm", "MD5")]), "neither SHA1 nor SHA256"),
            ([CDNField("Expires", "02000000000"), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K")], "'Expires' is not seconds"),
            ([CDNField("Expires", "+2000000000"), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K")], "'Expires' is not seconds"),
            ([CDNField("Expires", "-1"), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K")], "'Expires' is not seconds"),
            ([CDNField("Expires", "253402300800"), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K")], "'Expires' is not seconds"),
            ([CDNField("Expires", ""), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K")], "'Expires' is not seconds"),
            ([CDNField("Expires", "1"), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K P")], "'Key-Pair-Id' is not 1 to 128"),
            ([CDNField("Expires", "1"), CDNField("Signature", signature), CDNField("Key-Pair-Id", "")], "'Key-Pair-Id' is not 1 to 128"),
            ([CDNField("Expires", "1"), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K%41")], "'Key-Pair-Id' is not 1 to 128"),
            ([CDNField("Expires", "1"), CDNField("Signature", "ab+c"), CDNField("Key-Pair-Id", "K")], "'Signature' is not CloudFront Base64"),
            (
                [
                    CDNField("Expires", "1"), CDNField("Signature", CloudFrontBase64.encode([UInt8](repeating: 1, count: 1025))),
                    CDNField("Key-Pair-Id", "K"),
                ], "over the limit of 1024"
            ),
            ([CDNField("Policy", "e30_"), CDNField("Signature", signature), CDNField("Key-Pair-Id", "K")], "no 'Statement'"),
        ]
    )
    func parameterRefusals(_ pairs: [CDNField], _ reason: String) {
        let message = Self.refusal { _ = try CloudFrontToken(queryPairs: pairs) }
        #expect(message?.contains(reason) == true, "got \(message ?? "no refusal")")
        // The same values as cookies are refused alike, naming the cookie.
        let cookies = pairs.map { CDNField("CloudFront-" + $0.name, $0.value) }
        let cookieMessage = Self.refusal { _ = try CloudFrontToken(cookiePairs: cookies) }
        #expect(cookieMessage != nil)
    }

    @Test("cookie names need the CloudFront- prefix; query names must not have it")
    func carriersDoNotMix() {
        #expect(Self.refusal { _ = try CloudFrontToken(cookiePairs: Self.custom()) }?.contains("neither 'CloudFront-Expires'") == true)
        let cookies = Self.custom().map { CDNField("CloudFront-" + $0.name, $0.value) }
        #expect(Self.refusal { _ = try CloudFrontToken(queryPairs: cookies) }?.contains("neither 'Expires'") == true)
    }

    // MARK: - Policy

    static let statementStart = #"{"Statement":[{"Resource":"https://h.example/*","Condition":"#

    @Test(
        "policies are refused by rule",
        arguments: [
            ("[]", "not a JSON object"),
            ("\u{FEFF}" + #"{"Statement":[]}"#, "byte order mark"),
            (#"{"Statement":[]"#, "not a JSON object"),
            (#"{"Statement":[],"Statement":[]}"#, "appears twice"),
            (#"{"Statement":[], "Version":"2012-10-17"}"#, "the member 'Version'"),
            (#"{"Statement":{}}"#, "no 'Statement' array"),
            (#"{}"#, "no 'Statement' array"),
            (#"{"Statement":[]}"#, "0 statements"),
            (#"{"Statement":[{},{}]}"#, "2 statements"),
            (#"{"Statement":["x"]}"#, "the statement is not a JSON object"),
            (#"{"Statement":[{"Effect":"Allow"}]}"#, "the member 'Effect'"),
            (#"{"Statement":[{"Condition":{}}]}"#, "no 'Resource'"),
            (#"{"Statement":[{"Resource":7,"Condition":{}}]}"#, "'Resource' is not a string"),
            (#"{"Statement":[{"Resource":"r"}]}"#, "no 'Condition'"),
            (statementStart + #"[]}]}"#, "'Condition' is not a JSON object"),
            (statementStart + #"{}}]}"#, "no 'DateLessThan'"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"StringEquals":{"x":"y"}}}]}"#, "the condition 'StringEquals'"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"DateLessThan":{"AWS:EpochTime":2}}}]}"#, "appears twice"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":"1"}}}]}"#, "not an integer"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":-1}}}]}"#, "not an integer"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1.5}}}]}"#, "not an integer"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1e9}}}]}"#, "not an integer"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":253402300800}}}]}"#, "not an integer"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":99999999999999999999}}}]}"#, "not an integer"),
            (statementStart + #"{"DateLessThan":{}}}]}"#, "no 'AWS:EpochTime'"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1,"AWS:Other":2}}}]}"#, "the member 'AWS:Other'"),
            (statementStart + #"{"DateLessThan":7}}]}"#, "'DateLessThan' condition is not a JSON object"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"DateGreaterThan":{"AWS:EpochTime":null}}}]}"#, "'DateGreaterThan' condition's"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"IpAddress":{}}}]}"#, "no 'AWS:SourceIp'"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"IpAddress":{"AWS:SourceIp":["1.2.3.4/32"]}}}]}"#, "no 'AWS:SourceIp' string"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"IpAddress":{"AWS:SourceIp":"1.2.3.4"}}}]}"#, "with a prefix length"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"IpAddress":{"AWS:SourceIp":"1.2.3.4/33"}}}]}"#, "prefix length outside 0–32"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"IpAddress":{"AWS:SourceIp":"1.2.3.256/32"}}}]}"#, "does not hold an IPv4"),
            (statementStart + #"{"DateLessThan":{"AWS:EpochTime":1},"IpAddress":{"AWS:SourceIp":"fe80::1%eth0/128"}}}]}"#, "does not hold an IPv4"),
            ("{\"Statement\":[{\"Resource\":\"a\u{01}\"}]}", "not a JSON object read strictly"),
            (#"{"Statement":[{"Resource":"\ud800","Condition":{}}]}"#, "not a JSON object read strictly"),
        ]
    )
    func policyRefusals(_ json: String, _ reason: String) {
        let message = Self.refusal { _ = try CloudFrontPolicy(json: Array(json.utf8)) }
        #expect(message?.contains(reason) == true, "got \(message ?? "no refusal")")
    }

    @Test("a policy's limits: size, depth, value count")
    func policyLimits() {
        let long = #"{"Statement":[{"Resource":""# + String(repeating: "a", count: CloudFrontPolicy.maximumBytes) + #"","Condition":{}}]}"#
        #expect(Self.refusal { _ = try CloudFrontPolicy(json: Array(long.utf8)) }?.contains("over the limit") == true)
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(Self.refusal { _ = try CloudFrontPolicy(json: Array((#"{"Statement":"# + deep + "}").utf8)) } != nil)
        let many = #"{"Statement":["# + Array(repeating: "1", count: 100).joined(separator: ",") + "]}"
        #expect(Self.refusal { _ = try CloudFrontPolicy(json: Array(many.utf8)) } != nil)
    }

    @Test("white space is read, and the bytes are what a reader keeps for the signature")
    func whitespaceIsRead() throws {
        let text = """
            {
              "Statement": [ { "Resource": "https://h.example/a\\/b*",
                "Condition": { "DateGreaterThan": { "AWS:EpochTime": 5 }, "DateLessThan": { "AWS:EpochTime": 10 },
                               "IpAddress": { "AWS:SourceIp": "2001:DB8::/32" } } } ]
            }
            """
        let policy = try CloudFrontPolicy(json: Array(text.utf8))
        #expect(policy.resource == "https://h.example/a/b*")
        #expect(policy.dateGreaterThan == 5 && policy.dateLessThan == 10)
        #expect(policy.ipAddress?.text == "2001:DB8::/32")
        // Re-encoded in botocore's order; reading that back gives the same value.
        #expect(
            String(decoding: policy.json, as: UTF8.self)
                == #"{"Statement":[{"Resource":"https://h.example/a/b*","Condition":{"DateLessThan":{"AWS:EpochTime":10},"IpAddress":{"AWS:SourceIp":"2001:DB8::/32"},"DateGreaterThan":{"AWS:EpochTime":5}}}]}"#
        )
        #expect(try CloudFrontPolicy(json: policy.json) == policy)
    }

    @Test("strings are written as Python's json.dumps writes them")
    func pythonEscaping() throws {
        var out: [UInt8] = []
        PythonJSONString.append("a/\"\\\u{08}\u{0C}\n\r\t\u{01}\u{7F}é€😀", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #""a/\"\\\b\f\n\r\t\u0001\u007f\u00e9\u20ac\ud83d\ude00""#)
        #expect(PythonJSONString.needsNoEscaping("https://h/a?b=c&d=~"))
        #expect(!PythonJSONString.needsNoEscaping("https://h/a\"b"))
    }

    /// The reason of the `INVALID_TOKEN_FORMAT` refusal `body` throws, or nil.
    static func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as CDNRefusal {
            #expect(error.status == .invalidTokenFormat)
            return error.reason
        } catch {
            Issue.record("not a CDNRefusal: \(error)")
            return nil
        }
    }
}
