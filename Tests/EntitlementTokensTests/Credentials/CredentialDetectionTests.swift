import Foundation
import Testing

@testable import EntitlementTokens

/// What a pasted input is (docs/DESIGN.md#telling-the-kinds-apart): every pasted form of a
/// software statement, the kind of a `{…}` document by its members, and bare
/// Base64 as a signed requestor ID only when asked.
@Suite struct CredentialDetectionTests {
    static let statement: String = {
        let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"software_id":"app","iss":"x"}"#.utf8))
        return header + "." + claims + "." + Base64URL.encode([UInt8](repeating: 0xAB, count: 256))
    }()

    static func detect(_ text: String, asking kind: CredentialKind? = nil) -> DetectedCredential {
        CredentialDetection.detect(Array(text.utf8), asking: kind)
    }

    static func compact(_ detected: DetectedCredential) -> String? {
        if case .softwareStatement(let compact, _) = detected { return String(decoding: compact, as: UTF8.self) }
        return nil
    }

    static let pastedForms: [(String, String)] = [
        ("raw", statement),
        ("white space and a BOM", "\u{FEFF}  \(statement)\n"),
        ("double quotes", "\"\(statement)\""),
        ("single quotes and a comma", "'\(statement)',"),
        ("Bearer", "Authorization: Bearer \(statement)"),
        ("URL parameter", "https://sp.example.test/register?client=x&software_statement=\(statement)&y=1"),
        ("camel-case query parameter", "?softwareStatement=\(statement)"),
        ("token parameter", "https://x.test/?token=\(statement)"),
        ("form body", "software_statement=\(statement)"),
        ("JSON body", #"{"redirect_uris":["https://x.test/cb"],"software_statement":"\#(statement)"}"#),
        ("JSON body with a BOM", "\u{FEFF}{\"software_statement\":\"\(statement)\"}"),
        ("Base64 of the JWS", Data(statement.utf8).base64EncodedString()),
        ("Base64url of the JWS", Base64URL.encode(Array(statement.utf8))),
    ]

    @Test(arguments: pastedForms)
    func everyPastedFormIsASoftwareStatement(form: String, text: String) {
        let detected = Self.detect(text)
        #expect(Self.compact(detected) == Self.statement, "\(form): \(detected)")
        #expect(detected.kind == .softwareStatement)
    }

    @Test func stepsNameWhatWasRemoved() {
        guard case .softwareStatement(_, let steps) = Self.detect("\"\(Self.statement)\"") else {
            Issue.record("not a statement")
            return
        }
        #expect(steps.contains { $0.contains("double quotes") })
        #expect(Self.detect(Self.statement) == .softwareStatement(compact: Array(Self.statement.utf8), steps: []))
    }

    @Test(arguments: [
        (#"{"updated":1700000000,"encrypted":[],"data":{"zip":["10001"]}}"#, "user-metadata"),
        (#"{"keys":[]}"#, "jwks"),
        (#"{"serializedToken":"PHNpZ25hdHVyZUluZm8+"}"#, "token"),
        (#"{"decisions":[]}"#, "token"),
        (#"{"signedRequestorID":"c2lnbmF0dXJl"}"#, "signed-requestor-id"),
        (#"{"something":"else"}"#, "token"),
        (#"{"broken":"#, "token"),
    ])
    func aDocumentsKindComesFromItsMembers(text: String, expected: String) {
        let detected = Self.detect(text)
        let name: String =
            switch detected {
            case .token: "token"
            case .keySet: "jwks"
            case .refused(let error): "refused \(error.code)"
            default: detected.kind?.rawValue ?? "?"
            }
        #expect(name == expected)
    }

    @Test(arguments: [
        #"{"serializedToken":"PHN","updated":1,"data":{}}"#,
        #"{"keys":[],"data":{}}"#,
        #"{"software_statement":"eyJ.e30.","serializedToken":"PHN"}"#,
        #"{"keys":[],"decisions":[]}"#,
    ])
    func membersOfTwoKindsAreAmbiguous(text: String) {
        #expect(Self.detect(text) == .refused(TokenError(.ambiguousCredential, stage: .transport, "")))
    }

    @Test func bareBase64IsASignedRequestorIDOnlyWhenAsked() {
        let base64 = Data([UInt8](repeating: 0x5A, count: 256)).base64EncodedString()
        #expect(Self.detect(base64) == .token)
        #expect(Self.detect(base64, asking: .signedRequestorID).kind == .signedRequestorID)
        #expect(Self.detect("https://x.test/?signedRequestorID=\(base64.replacingOccurrences(of: "+", with: "%2B"))").kind == .signedRequestorID)
        #expect(Self.detect("signedRequestorID=abc").kind == .signedRequestorID)
    }

    @Test func tokensStayTokens() {
        #expect(Self.detect("<signatureInfo>abc<signatureInfo><authToken></authToken>") == .token)
        #expect(Self.detect(Fixtures.base64(Fixtures.vendorMedia)) == .token)
        #expect(Self.detect("https://x.test/?token=\(Fixtures.base64url(Fixtures.vendorMedia))") == .token)
    }

    @Test func askingForAnotherKindIsRefused() {
        #expect(Self.detect(Self.statement, asking: .userMetadata) == .refused(TokenError(.unrecognizedCredential, stage: .transport, "")))
        #expect(Self.detect(#"{"keys":[]}"#, asking: .softwareStatement) == .refused(TokenError(.unrecognizedCredential, stage: .transport, "")))
        #expect(Self.detect(Self.statement, asking: .softwareStatement).kind == .softwareStatement)
    }

    @Test func anAlgNoneStatementIsStillDetectedSoItCanBeRefusedByName() {
        let none = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"sub":"x"}"#.utf8)) + "."
        #expect(Self.compact(Self.detect(none)) == none)
    }
}
