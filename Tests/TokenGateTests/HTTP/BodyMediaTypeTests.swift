import HTTPTypes
import Testing

@testable import TokenGate

/// The `Content-Type` rule the playback and report routes share, read on the field's bytes.
@Suite struct BodyMediaTypeTests {
    private func refusal(_ values: [String], _ accepted: BodyMediaType = .json, absentIsAccepted: Bool = false) -> String? {
        var fields = HTTPFields()
        for value in values { fields.append(HTTPField(name: .contentType, value: value)) }
        return BodyMediaType.refusal(fields, accepting: accepted, absentIsAccepted: absentIsAccepted)
    }

    @Test func theEssenceIsComparedWithoutCaseBeforeItsParameters() {
        #expect(refusal(["application/json"]) == nil)
        #expect(refusal(["Application/JSON; charset=utf-8"]) == nil)
        #expect(refusal(["application/json\t ;charset=utf-8"]) == nil)
        #expect(refusal(["text/PLAIN"], .tokens) == nil)
        #expect(refusal(["application/octet-stream"], .tokens) == nil)
    }

    @Test func anotherTypeIsRefusedAndNamedEscaped() throws {
        let reason = try #require(refusal(["application/jsonx; q=1"]))
        #expect(reason == "the body is application/jsonx; this route reads application/json")
        #expect(refusal(["application/x-www-form-urlencoded"]) != nil)
        #expect(refusal(["application/json-seq"]) != nil)
        #expect(refusal([";application/json"]) != nil)
        #expect(refusal(["text/plain"]) != nil)
        // A lookalike that Unicode case mapping would make ASCII (U+212A KELVIN SIGN lowers to "k")
        // is not the type, and is named as sent.
        let hostile = try #require(refusal(["text/ht\u{212A}ml"], .tokens))
        #expect(hostile == "the body is text/ht%E2%84%AAml; this route reads application/json, application/octet-stream, text/plain")
    }

    @Test func twoFieldsReadTwoWaysAndNoneIsAcceptedOnlyWhereSaid() {
        #expect(refusal(["application/json", "application/json"]) == "the request has more than one Content-Type field: it reads two ways")
        #expect(refusal([]) == "the request names no Content-Type; the body is read as application/json")
        #expect(refusal([], .tokens, absentIsAccepted: true) == nil)
    }
}
