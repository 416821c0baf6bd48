import Testing

@testable import TokenGate

/// The playback routes' JSON body, read in one pass without a tree: what it
/// takes, and every way it refuses, with the reason a caller sees.
@Suite struct StringMembersBodyTests {
    static let allowed = ["token", "resource", "profile", "deviceId"]

    static func read(_ text: String) -> Result<[String: String], StringMembersBody.Refusal> {
        StringMembersBody.read(Array(text.utf8), allowed: allowed).map(\.byName)
    }

    @Test(
        "a flat object of string members is read, escapes and all",
        arguments: [
            (#"{"token":"abc","resource":"TNT"}"#, ["token": "abc", "resource": "TNT"]),
            (" \n{ \"profile\" : \"a\\\"b\\u00e9\\ud83d\\ude00\" }\t", ["profile": "a\"bé😀"]),
            (#"{"to\u006ben":"x"}"#, ["token": "x"]),
            (#"{}"#, [:]),
            ("\u{FEFF}{\"token\":\"t\"}", ["token": "t"]),
            (#"{"deviceId":""}"#, ["deviceId": ""]),
        ] as [(String, [String: String])]
    )
    func reads(_ text: String, _ expected: [String: String]) throws {
        #expect(try Self.read(text).get() == expected)
    }

    @Test(
        "anything else is refused, naming why",
        arguments: [
            (#"["token"]"#, "the body is not a JSON object"),
            (#""token""#, "the body is not a JSON object"),
            ("", "the body is not a JSON object: "),
            (#"{"token":"a""#, "the body is not a JSON object: "),
            (#"{"token":"a"} {}"#, "the body is not a JSON object: "),
            (#"{"token":'a'}"#, "the body is not a JSON object: "),
            ("{\"token\":\"a\u{01}\"}", "the body is not a JSON object: "),
            (#"{"token":"\ud800"}"#, "the body is not a JSON object: "),
            (#"{"token":1}"#, "token is not a string"),
            (#"{"token":null}"#, "token is not a string"),
            (#"{"token":{"a":"b"}}"#, "token is not a string"),
            (#"{"token":["a"]}"#, "token is not a string"),
            (#"{"token":"a","x":"1"}"#, "the body's member x is not one of token, resource, profile, deviceId"),
            // A member the route does not take is named before a break later in the text.
            (#"{"x":"1",]"#, "the body's member x is not one of"),
            (#"{"token":"a","token":"b"}"#, "the body names token twice: it reads two ways"),
            (#"{"token":"a","to\u006ben":"b"}"#, "the body names token twice"),
        ] as [(String, String)]
    )
    func refuses(_ text: String, _ reason: String) {
        switch Self.read(text) {
        case .success(let values): Issue.record("\(text) was read as \(values)")
        case .failure(let refusal): #expect(refusal.reason.hasPrefix(reason), "\(refusal.reason)")
        }
    }

    @Test func aHostileMemberNameIsEscapedInTheReason() {
        guard case .failure(let refusal) = Self.read("{\"\\u001b[31m\":\"a\"}") else {
            Issue.record("read")
            return
        }
        #expect(!refusal.reason.utf8.contains(0x1B), "\(refusal.reason)")
    }

    @Test func aStringPastTheLibrarysBoundIsRefused() {
        let long = String(repeating: "a", count: 64 * 1024 + 1)
        guard case .failure(let refusal) = Self.read("{\"token\":\"\(long)\"}") else {
            Issue.record("read")
            return
        }
        #expect(refusal.reason.hasPrefix("the body is not a JSON object: "), "\(refusal.reason)")
    }
}
