import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// A public key pasted into the debugger (docs/DESIGN.md#a-pasted-key): one
/// report's own verifier, never the gate's ring or `/v1/*`; what it verifies
/// is never `VALID_TOKEN`; private keys, PKCS#12 and private JWKs refused;
/// Degenerate keys refused (docs/DESIGN.md#degenerate-keys). And the `multipart/form-data` reader that carries it.
@Suite struct DebuggerPastedKeyTests {
    let clock = GateFixtures.Clock()
    static let boundary = "----tokengate-test-7MA4YWxkTrZu0gW"
    static let fixtureKeys = GateFixtures.repository.appendingPathComponent("Tests/EntitlementTokensTests/Fixtures/Keys")

    static func fixtureKey(_ name: String) -> String {
        (try? String(contentsOf: fixtureKeys.appendingPathComponent(name), encoding: .utf8)) ?? "missing fixture \(name)"
    }

    static func multipart(_ parts: [(String, String)], boundary: String = boundary) -> String {
        parts.map { "--\(boundary)\r\nContent-Disposition: form-data; name=\"\($0.0)\"\r\n\r\n\($0.1)\r\n" }.joined() + "--\(boundary)--\r\n"
    }

    func debuggerServer() throws -> DebuggerServer {
        let options = try DebuggerOptions.parse(["--key", GateFixtures.publicKey])
        return try DebuggerServer(configuration: DebuggerConfiguration(options), logger: LogCapture().logger, clock: { clock.read() })
    }

    /// The answer to a report with these tokens and this pasted key, as JSON.
    func report(
        _ client: any TestClientProtocol,
        tokens: String,
        key: String?,
        query: String = "",
        route: String = "/debugger/report"
    ) async throws -> (TestResponse, [String: Any]) {
        var headers: HTTPFields = [:]
        let body: String
        if let key {
            headers[.contentType] = "multipart/form-data; boundary=\(Self.boundary)"
            body = Self.multipart([("input", tokens), ("key", key)])
        } else {
            body = tokens
        }
        let response = try await client.executeRequest(uri: route + query, method: .post, headers: headers, body: ByteBuffer(string: body))
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
        return (response, object)
    }

    @Test func aTokenSignedByThePastedKeyIsNeverValid() async throws {
        let server = try debuggerServer()
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        try await server.application().test(.router) { client in
            let (response, answer) = try await report(client, tokens: forged, key: DebuggerFixtures.untrustedPublicPEM)
            #expect(response.status == .ok)
            let reports = try #require(answer["reports"] as? [[String: Any]])
            #expect(reports.first?["status"] as? String == "INVALID_SIGNATURE")
            let pasted = try #require((answer["pastedKey"] as? [[String: Any]])?.first)
            #expect(pasted["tried"] as? Bool == true)
            #expect(pasted["signedByPastedKey"] as? Bool == true)
            #expect(pasted["status"] as? String == "SIGNED_BY_PASTED_KEY")
            #expect((pasted["reason"] as? String)?.contains("not trusted by this gate") == true)
            #expect((pasted["key"] as? String)?.contains("the pasted key") == true)
            let keys = try #require(answer["pastedKeys"] as? [String])
            #expect(keys.count == 1 && keys[0].contains("RSA-2048"))
            // Nowhere in the answer does the forged token look genuine.
            #expect(!String(buffer: response.body).contains("VALID_TOKEN"))
            // Without the paste, the same token is only INVALID_SIGNATURE, and no pasted-key member is answered.
            let (_, plain) = try await report(client, tokens: forged, key: nil)
            #expect((plain["reports"] as? [[String: Any]])?.first?["status"] as? String == "INVALID_SIGNATURE")
            #expect(plain["pastedKey"] == nil && plain["pastedKeys"] == nil)
        }
    }

    @Test func thePastedKeyRunsThePagesOtherChecksAndSaysWhatFailed() async throws {
        let server = try debuggerServer()
        var expired = GateFixtures.request()
        expired.issueTime = GateFixtures.issued.adding(milliseconds: -86_400_000)!
        let tokens = [
            GateFixtures.token(expired, key: GateFixtures.untrustedKey),  // forged and expired
            GateFixtures.token(),  // the gate's own key
            GateFixtures.token(key: GateFixtures.untrustedKey),  // forged, every other check passes
            "not a token",
        ].joined(separator: "\n")
        let otherKey = Self.fixtureKey("test-rsa2048-b.pub.pem")
        try await server.application().test(.router) { client in
            let (_, answer) = try await report(client, tokens: tokens, key: DebuggerFixtures.untrustedPublicPEM)
            let checks = try #require(answer["pastedKey"] as? [[String: Any]])
            try #require(checks.count == 4)
            #expect(checks[0]["status"] as? String == "TOKEN_EXPIRED")
            #expect(checks[0]["signedByPastedKey"] as? Bool == true)
            #expect(checks[1]["tried"] as? Bool == false)
            #expect((checks[1]["reason"] as? String)?.contains("a key this gate trusts") == true)
            #expect(checks[3]["tried"] as? Bool == false)
            let statuses = (answer["reports"] as? [[String: Any]])?.map { $0["status"] as? String }
            #expect(statuses == ["INVALID_SIGNATURE", "VALID_TOKEN", "INVALID_SIGNATURE", "INVALID_TOKEN_FORMAT"])
            #expect(checks[2]["status"] as? String == "SIGNED_BY_PASTED_KEY")

            let (_, resource) = try await report(
                client,
                tokens: GateFixtures.token(key: GateFixtures.untrustedKey),
                key: DebuggerFixtures.untrustedPublicPEM,
                query: "?resource=CNN"
            )
            #expect((resource["pastedKey"] as? [[String: Any]])?.first?["status"] as? String == "INVALID_RESOURCE_ID")

            // Another key pasted: tried, and it does not verify.
            let (_, wrong) = try await report(client, tokens: GateFixtures.token(key: GateFixtures.untrustedKey), key: otherKey)
            let miss = try #require((wrong["pastedKey"] as? [[String: Any]])?.first)
            #expect(miss["tried"] as? Bool == true)
            #expect(miss["signedByPastedKey"] as? Bool == false)
        }
    }

    /// The pasted key is that report's only: the gate's ring, `/v1/*` and the
    /// auth endpoint never learn it; `/v1/*` does not read a multipart body at all (415).
    @Test func thePastedKeyReachesNeitherTheGateNorV1() async throws {
        let runtime = try GateFixtures.runtime(["--debugger", "--replay", "memory"], clock: clock)
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        try await runtime.application().test(.router) { client in
            let (_, debugger) = try await report(client, tokens: forged, key: DebuggerFixtures.untrustedPublicPEM)
            #expect((debugger["pastedKey"] as? [[String: Any]])?.first?["status"] as? String == "SIGNED_BY_PASTED_KEY")
            for route in ["/v1/verify", "/v1/inspect"] {
                let (response, _) = try await report(client, tokens: forged, key: DebuggerFixtures.untrustedPublicPEM, route: route)
                #expect(response.status == .unsupportedMediaType, "\(route)")
                #expect(!String(buffer: response.body).contains("VALID_TOKEN"), "\(route) used the pasted key")
                #expect(!String(buffer: response.body).contains("pastedKey"))
            }
            let afterwards = try await client.executeRequest(uri: "/v1/verify", method: .post, headers: [:], body: ByteBuffer(string: forged))
            let statuses = try JSONSerialization.jsonObject(with: Data(buffer: afterwards.body)) as? [[String: Any]]
            #expect(statuses?.first?["status"] as? String == "INVALID_SIGNATURE")
            let played = try await client.authRequest("/a?token=\(forged)")
            #expect(played.tokenStatus == "INVALID_SIGNATURE")
            #expect(played.status == .unauthorized || played.status == .forbidden)
        }
    }

    static let refusals: [(name: String, key: String, expected: String)] = [
        ("PKCS#8 private key", fixtureKey("test-rsa2048.pem"), "a private key (PEM \"PRIVATE KEY\")"),
        ("traditional RSA private key", fixtureKey("test-rsa2048-traditional.pem"), "a private key (PEM \"RSA PRIVATE KEY\")"),
        ("encrypted private key", fixtureKey("test-p256-encrypted.pem"), "a private key (PEM \"ENCRYPTED PRIVATE KEY\")"),
        ("SEC1 EC private key", fixtureKey("test-p256-sec1.pem"), "a private key (PEM \"EC PRIVATE KEY\")"),
        (
            "OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
            "a private key (PEM \"OPENSSH PRIVATE KEY\")"
        ),
        ("public key then a private key", DebuggerFixtures.untrustedPublicPEM + fixtureKey("test-rsa2048.pem"), "a private key"),
        ("JWK with d, p, q", #"{"kty":"RSA","n":"AQAB","e":"AQAB","d":"x","p":"y","q":"z"}"#, "a JWK with private members (\"d\", \"p\", \"q\")"),
        ("JWKS with an EC d", #"{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b", "d" : "c"}]}"#, "a JWK with private members (\"d\")"),
        ("public JWK", #"{"kty":"RSA","n":"AQAB","e":"AQAB"}"#, "paste the public key as PEM"),
        ("RSA e=2", fixtureKey("test-degenerate-rsa2048-e2.pub.pem"), "no option accepts such a key"),
        ("RSA e=1", fixtureKey("test-degenerate-rsa2048-e1.pub.pem"), "no option accepts such a key"),
        ("RSA even modulus", fixtureKey("test-degenerate-rsa2048-even-modulus.pub.pem"), "no option accepts such a key"),
        ("P-256 point off the curve", fixtureKey("test-degenerate-p256-off-curve.pub.pem"), "curve"),
        ("Ed25519 identity point", fixtureKey("test-degenerate-ed25519-identity.pub.pem"), "no option accepts such a key"),
        ("RSA-1024 (no opt-in here)", fixtureKey("test-rsa1024.pub.pem"), "1024"),
        ("garbage", "hello, this is not a key", "neither PEM"),
        ("too large", String(repeating: "A", count: PastedKey.maximumBytes + 1), "under \(PastedKey.maximumBytes)"),
    ]

    @Test(arguments: refusals.indices)
    func refusedKeysAreNamedAndNothingIsChecked(index: Int) async throws {
        let (name, key, expected) = Self.refusals[index]
        let server = try debuggerServer()
        try await server.application().test(.router) { client in
            let (response, answer) = try await report(client, tokens: GateFixtures.token(key: GateFixtures.untrustedKey), key: key)
            #expect(response.status == .badRequest, "\(name)")
            #expect(answer["field"] as? String == "key", "\(name)")
            let error = answer["error"] as? String ?? ""
            #expect(error.hasPrefix("pasted key: "), "\(name): \(error)")
            #expect(error.contains(expected), "\(name): \(error)")
            #expect(answer["reports"] == nil, "\(name)")
            #expect(response["Content-Security-Policy"]?.hasPrefix(DebuggerFixtures.strictCSP) == true)
        }
    }

    @Test func privateKeysAndPKCS12AreRefusedWithWhatToPasteInstead() throws {
        for key in [Self.fixtureKey("test-rsa2048.pem"), #"{"kty":"OKP","crv":"Ed25519","x":"a","d":"b"}"#] {
            #expect(throws: PastedKey.Refused.self) { try PastedKey.ring(from: Array(key.utf8)) }
            do {
                _ = try PastedKey.ring(from: Array(key.utf8))
            } catch {
                #expect(error.reason.contains("openssl pkey -in KEY -pubout"), "\(error.reason)")
            }
        }
        // A real PKCS#12 bundle, as openssl makes it, binary and in Base64.
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bundle = directory.appendingPathComponent("key.p12")
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "pkcs12", "-export", "-inkey", Self.fixtureKeys.appendingPathComponent("test-rsa2048.pem").path,
            "-in", Self.fixtureKeys.appendingPathComponent("test-rsa2048-cert.pem").path, "-out", bundle.path, "-passout", "pass:",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0, "openssl pkcs12 -export failed")
        let der = try [UInt8](Data(contentsOf: bundle))
        #expect(PastedKey.isPKCS12(der))
        for paste in [der, Array(Data(der).base64EncodedString(options: [.lineLength64Characters]).utf8)] {
            do {
                _ = try PastedKey.ring(from: paste)
                Issue.record("a PKCS#12 bundle was accepted")
            } catch {
                #expect(error.reason.contains("PKCS#12"), "\(error.reason)")
            }
        }
        // A public key's DER is not mistaken for one, and loads.
        #expect(!PastedKey.isPKCS12(GateFixtures.untrustedKey.publicKey.derRepresentation))
        #expect(try PastedKey.ring(from: GateFixtures.untrustedKey.publicKey.derRepresentation)?.keys.count == 1)
        #expect(try PastedKey.ring(from: Array(" \n\t".utf8)) == nil)
        #expect(
            try PastedKey.ring(from: Array((DebuggerFixtures.untrustedPublicPEM + Self.fixtureKey("test-rsa2048-cert.pem")).utf8))?.keys.count == 2
        )
    }

    /// A forged token made with a degenerate key (e = 1: the "signature" is the
    /// padded digest itself) and pasted with that key is refused, not shown as signed.
    @Test func aTokenForgedWithADegenerateKeyAndPastedWithItIsRefused() async throws {
        let server = try debuggerServer()
        let forged = Self.fixtureKey("test-forged-rsa-e1.token")
        try await server.application().test(.router) { client in
            let (response, answer) = try await report(client, tokens: forged, key: Self.fixtureKey("test-degenerate-rsa2048-e1.pub.pem"))
            #expect(response.status == .badRequest)
            #expect((answer["error"] as? String)?.contains("no option accepts such a key") == true, "\(answer)")
            #expect(!String(buffer: response.body).contains("SIGNED_BY_PASTED_KEY"))
        }
    }

    // MARK: The multipart reader

    @Test func theFormDataReaderReadsWhatBrowsersAndCurlSend() throws {
        #expect(try DebuggerFormData.boundary(ofContentType: "text/plain") == nil)
        #expect(try DebuggerFormData.boundary(ofContentType: nil) == nil)
        #expect(
            try DebuggerFormData.boundary(ofContentType: "multipart/form-data; boundary=----WebKitFormBoundaryAb3") == "----WebKitFormBoundaryAb3"
        )
        #expect(try DebuggerFormData.boundary(ofContentType: "Multipart/Form-Data;charset=utf-8; BOUNDARY=\"a b:c\"") == "a b:c")
        for bad in [
            "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=\(String(repeating: "x", count: 71))",
            "multipart/form-data; boundary=a<b",
        ] {
            #expect(throws: DebuggerFormData.Invalid.self, "\(bad)") { try DebuggerFormData.boundary(ofContentType: bad) }
        }
        // curl -F: a preamble-free body, a filename, a content type, CRLF inside the content kept.
        let body =
            "--XYZ\r\nContent-Disposition: form-data; name=\"input\"; filename=\"tokens.txt\"\r\nContent-Type: text/plain\r\n\r\n"
            + "line 1\r\nline 2\r\n--XYZ\r\ncontent-disposition: form-data; name=key\r\n\r\n-----BEGIN\r\n--XYZ--\r\n"
        let form = try DebuggerFormData(body: Array(body.utf8), boundary: "XYZ", allowedNames: ["input", "key"])
        #expect(form.content("input") == Array("line 1\r\nline 2".utf8))
        #expect(form.content("key") == Array("-----BEGIN".utf8))
        // A preamble and an empty part.
        let preamble = "ignored\r\n--XYZ\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\n\r\n--XYZ--"
        #expect(try DebuggerFormData(body: Array(preamble.utf8), boundary: "XYZ", allowedNames: ["input"]).content("input") == [])

        let refused: [(String, String)] = [
            ("--XYZ\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--XYZ--", "unknown part 'other'"),
            (
                "--XYZ\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\nx\r\n--XYZ\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\ny\r\n--XYZ--",
                "twice"
            ),
            ("--XYZ\r\nContent-Disposition: form-data; name=\"input\"\r\n\r\nx", "ends before"),
            ("no delimiter at all", "no '--XYZ' line"),
            ("--XYZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XYZ--", "no Content-Disposition"),
            ("--XYZ\r\nContent-Disposition: attachment; name=\"input\"\r\n\r\nx\r\n--XYZ--", "not form-data"),
            ("--XYZ\r\nContent-Disposition: form-data; name=\"input\"" + String(repeating: "x", count: 5000) + "\r\n\r\nx\r\n--XYZ--", "headers"),
            ("--XYZjunk\r\n", "CRLF"),
        ]
        let names = (0...DebuggerFormData.maximumParts).map { "p\($0)" }
        let tooMany = names.map { "--XYZ\r\nContent-Disposition: form-data; name=\"\($0)\"\r\n\r\nx\r\n" }.joined() + "--XYZ--"
        #expect(throws: DebuggerFormData.Invalid(reason: "the multipart body has more than \(DebuggerFormData.maximumParts) parts")) {
            try DebuggerFormData(body: Array(tooMany.utf8), boundary: "XYZ", allowedNames: names)
        }
        for (text, reason) in refused {
            do {
                _ = try DebuggerFormData(body: Array(text.utf8), boundary: "XYZ", allowedNames: ["input", "key"])
                Issue.record("accepted: \(text.prefix(80))")
            } catch {
                #expect(error.reason.contains(reason), "\(error.reason) for \(text.prefix(80))")
            }
        }
    }

    @Test func aMultipartBodyWithoutTheTokensOrWithABadBoundaryIs400() async throws {
        let server = try debuggerServer()
        try await server.application().test(.router) { client in
            let keyOnly = Self.multipart([("key", DebuggerFixtures.untrustedPublicPEM)])
            let response = try await client.executeRequest(
                uri: "/debugger/report",
                method: .post,
                headers: [.contentType: "multipart/form-data; boundary=\(Self.boundary)"],
                body: ByteBuffer(string: keyOnly)
            )
            #expect(response.status == .badRequest)
            #expect(String(buffer: response.body).contains("no 'input' part"))
            let noBoundary = try await client.executeRequest(
                uri: "/debugger/report",
                method: .post,
                headers: [.contentType: "multipart/form-data"],
                body: ByteBuffer(string: "x")
            )
            #expect(noBoundary.status == .badRequest)
            // A key part of white space only is no key: the report is the gate's alone.
            let (blank, answer) = try await report(client, tokens: GateFixtures.token(), key: "\n  \n")
            #expect(blank.status == .ok)
            #expect((answer["reports"] as? [[String: Any]])?.first?["status"] as? String == "VALID_TOKEN")
            #expect(answer["pastedKey"] == nil)
        }
    }

    /// What each record was as pasted comes back beside its report, for the page's encoded view.
    @Test func eachReportComesWithItsRecordAsPasted() async throws {
        let server = try debuggerServer()
        let base64 = GateFixtures.token()
        let raw = "<signatureInfo>AAAA<signatureInfo>\n<authToken>\n  <requestorID>TNT</requestorID>\n</authToken>"
        try await server.application().test(.router) { client in
            let (_, answer) = try await report(client, tokens: "\(base64)\n\n\(raw)\n", key: nil)
            #expect(answer["encoded"] as? [String] == [base64, raw])
        }
    }
}
