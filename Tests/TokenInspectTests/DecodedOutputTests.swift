import Foundation
import Testing

/// docs/DESIGN.md#output-forms, "what was decoded, whole": the signature's text and the Media RSS
/// reading in JSON, the decoded XML and the signed bytes for other tools, and
/// the fields read before a format error.
@Suite struct DecodedOutputTests {
    static func sample(_ line: Int) throws -> String {
        let text = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/tokens/valid.txt"), encoding: .utf8)
        return String(text.split(separator: "\n")[line - 1])
    }

    @Test func jsonCarriesTheSignatureTextAndTheMediaRSSReading() throws {
        let rss = try CLI.jsonLines(try CLI.run(["inspect", "--format", "jsonl", try Self.sample(4)]).stdout)[0]
        #expect(rss["resourceRSS"] as? [String: String] == ["channel": "TNT", "itemTitle": "Dia 2", "guid": "2847811", "rating": "tv-pg"])
        let raw = try Self.sample(1)
        let bare = try CLI.jsonLines(try CLI.run(["inspect", "--format", "jsonl", raw]).stdout)[0]
        #expect(bare["resourceRSS"] is NSNull)
        let signature = try #require(bare["signature"] as? [String: Any])
        let value = try #require(signature["value"] as? String)
        // The text between the tags, exactly.
        let between = try #require(raw.range(of: "<signatureInfo>")).upperBound
        #expect(raw[between...].hasPrefix(value + "<signatureInfo>"))
        #expect(Data(base64Encoded: value)?.count == signature["bytes"] as? Int)
    }

    @Test func emitXMLWritesTheDecodedToken() throws {
        let raw = try Self.sample(1)
        let base64 = try Self.sample(5)
        let fromRaw = try CLI.run(["inspect", "--emit", "xml", raw])
        #expect(fromRaw.status == 0)
        #expect(fromRaw.stdout == raw + "\n")
        let fromBase64 = try CLI.run(["inspect", "--emit", "xml", base64])
        #expect(fromBase64.stdout == String(decoding: try #require(Data(base64Encoded: base64)), as: UTF8.self) + "\n")
        // A record that does not decode: named on stderr, exit 1, the others still written.
        let mixed = try CLI.run(["inspect", "--emit", "xml", raw, "garbage"])
        #expect(mixed.status == 1)
        #expect(mixed.stdout == raw + "\n")
        #expect(mixed.stderr.contains("argument 2:1"))
    }

    /// The signed bytes, piped to the real `openssl dgst -sha256 -verify` with
    /// the signature from the JSON: what a support engineer does by hand.
    @Test(arguments: [
        ("Samples/keys/test-rsa2048.pem", "Samples/keys/trusted/test-rsa2048.pub.pem"),
        ("Samples/keys/test-p256.pem", "Samples/keys/trusted/test-p256.pub.pem"),
    ])
    func signedBytesVerifyWithOpenSSL(privateKey: String, publicKey: String) throws {
        let minted = try CLI.run([
            "mint", "--key", privateKey, "--requestor", "TNT", "--resource", "TNT",
            "--issue-time", "2026-01-15T12:00:00Z", "--pretty", "--encoding", "base64",
        ])
        let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("signed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        let signed = try CLI.run(["inspect", "--emit", "xml", "--show-signed-bytes", token])
        #expect(signed.status == 0)
        #expect(signed.stdout.hasPrefix("<authToken>") && signed.stdout.hasSuffix("</authToken>"))
        let report = try CLI.jsonLines(try CLI.run(["inspect", "--format", "jsonl", token]).stdout)[0]
        let value = try #require((report["signature"] as? [String: Any])?["value"] as? String)
        var signature = try #require(Data(base64Encoded: value))
        if privateKey.contains("p256") { signature = Self.derFromRawECDSA(signature) }
        try Data(signed.stdout.utf8).write(to: scratch.appendingPathComponent("signed.xml"))
        try signature.write(to: scratch.appendingPathComponent("signature.bin"))
        var tampered = Data(signed.stdout.utf8)
        tampered[tampered.count / 2] ^= 0x01
        try tampered.write(to: scratch.appendingPathComponent("tampered.xml"))

        let pub = CLI.packageRoot.appendingPathComponent(publicKey).path
        #expect(try Self.openssl(["dgst", "-sha256", "-verify", pub, "-signature", "signature.bin", "signed.xml"], in: scratch) == 0)
        #expect(try Self.openssl(["dgst", "-sha256", "-verify", pub, "-signature", "signature.bin", "tampered.xml"], in: scratch) != 0)
    }

    /// ECDSA tokens may carry the raw r‖s form (64 bytes); openssl wants DER.
    static func derFromRawECDSA(_ signature: Data) -> Data {
        guard signature.count == 64 else { return signature }
        func integer(_ bytes: Data) -> Data {
            var value = Data(bytes.drop { $0 == 0 })
            if value.isEmpty { value = Data([0]) }
            if value.first! >= 0x80 { value.insert(0, at: 0) }
            return Data([0x02, UInt8(value.count)]) + value
        }
        let body = integer(signature.prefix(32)) + integer(signature.suffix(32))
        return Data([0x30, UInt8(body.count)]) + body
    }

    static func openssl(_ arguments: [String], in directory: URL) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(arguments: [
        ("<ttl>", "<ttl>1</ttl><ttl>", "duplicateField"),
        ("<issueTime>2026-01-15 12:00:00 +0000", "<issueTime>yesterday", "invalidFieldValue"),
        ("</mvpdId>", "</mvpdId><a b=\"1\" b=\"2\"/>", "malformedXML"),
        ("</mvpdId>", "&bogus;</mvpdId>", "entityForbidden"),
    ])
    func aFormatErrorShowsTheFieldsReadBeforeIt(find: String, replace: String, code: String) throws {
        let raw = try Self.sample(1)
        try #require(raw.contains(find))
        let damaged = raw.replacingOccurrences(of: find, with: replace)
        let text = try CLI.run(["inspect", damaged])
        #expect(text.status == 1)
        #expect(text.stdout.contains("fields read before the error"))
        #expect(text.stdout.contains("requestorID  TNT"), "\(text.stdout)")
        let json = try CLI.jsonLines(try CLI.run(["inspect", "--format", "jsonl", damaged]).stdout)[0]
        let error = try #require(json["error"] as? [String: Any])
        #expect(error["code"] as? String == code)
        let fields = try #require(error["fieldsBeforeError"] as? [String: Any])
        #expect(fields["sessionGUID"] as? String == "sample-1")
        #expect(fields["issueTime"] as? String != nil)
    }
}
