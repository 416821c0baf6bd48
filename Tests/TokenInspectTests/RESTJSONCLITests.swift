import Foundation
import Testing

/// REST JSON responses through the binary (docs/DESIGN.md#transport-forms, docs/DESIGN.md#output-forms).
@Suite struct RESTJSONCLITests {
    /// The sample REST v1 response's token.
    static func sampleToken() throws -> String {
        let data = try Data(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/tokens/rest-v1.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(object["serializedToken"] as? String)
    }

    /// 30 MB of `{"x":[{},{},…],"serializedToken":…}` once cost 850 MB and 70 s of CPU:
    /// now the unused members are skipped as they stream past.
    @Test func aThirtyMegabyteDocumentStreamsInFlatMemory() throws {
        let token = try Self.sampleToken()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-30mb-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try #require(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.write(Data(#"{"x":["#.utf8))
        let block = Data(String(repeating: "{},", count: 1024 * 1024 / 3).utf8)
        for _ in 0..<30 { handle.write(block) }
        handle.write(Data(#"{}],"expires":"1768478820000","serializedToken":"\#(token)"}"#.utf8))
        try handle.close()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 30_000_000)

        let result = try CLI.run(["verify", "--format", "jsonl"] + CLI.sampleFlags + ["@" + path], measuresMemory: true)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try CLI.jsonLines(result.stdout)
        #expect(objects.count == 1)
        #expect(objects.first?["status"] as? String == "VALID_TOKEN")
        #expect(result.maxRSSKiB > 1024)  // measured at all
        print("peak RSS for a 30 MB REST document: \(result.maxRSSKiB) KiB")
        #expect(result.maxRSSKiB < 48 * 1024, "peak RSS \(result.maxRSSKiB) KiB")
    }

    @Test func envelopeValuesKeepTheirJSONTypesAndDecisionsTheirLine() throws {
        let token = try Self.sampleToken()
        let document = """
            {"decisions": [
              {"resource": "TNT", "authorized": true, "score": -1.5e3, "note": null,
               "token": {"notAfter": 1768478820000, "notBefore": "1768478400000", "serializedToken": "\(token)"}},
              {"resource": "TBS", "authorized": false, "error": {"details": "not entitled"}}
            ]}
            """
        let result = try CLI.run(["verify", "--format", "jsonl"] + CLI.sampleFlags + ["-"], stdin: document)
        let objects = try CLI.jsonLines(result.stdout)
        try #require(objects.count == 2)
        #expect(objects.map { $0["line"] as? Int } == [2, 4])
        let envelope = try #require(objects[0]["envelope"] as? [String: Any])
        #expect(envelope["authorized"] as? Bool == true)
        #expect((envelope["notAfter"] as? NSNumber)?.int64Value == 1_768_478_820_000)
        #expect(envelope["notBefore"] as? String == "1768478400000")
        #expect((envelope["score"] as? NSNumber)?.doubleValue == -1500)
        #expect(envelope["note"] is NSNull)
        // The raw text keeps the number as written.
        #expect(result.stdout.contains(#""score":-1.5e3"#))
        #expect(objects[1]["status"] as? String == "INVALID_TOKEN_FORMAT")
        #expect((objects[1]["reason"] as? String)?.contains("not entitled") == true)
    }

    @Test func ambiguousEnvelopesAndTopLevelArraysAreRefused() throws {
        let token = try Self.sampleToken()
        for document in [
            #"{"serializedToken":"\#(token)","serializedToken":"\#(token)"}"#,
            #"{"serializedToken":"\#(token)","decisions":[]}"#,
            #"[{"serializedToken":"\#(token)"}]"#,
        ] {
            let result = try CLI.run(["verify", "--format", "jsonl"] + CLI.sampleFlags + ["-"], stdin: "\u{FEFF}" + document)
            #expect(result.status == 1)
            let objects = try CLI.jsonLines(result.stdout)
            #expect(objects.count == 1)
            #expect(objects.first?["status"] as? String == "INVALID_TOKEN_FORMAT")
        }
    }

    /// A v2 decision without a token (a denial) is reported with its envelope:
    /// the resource and whether it was authorized, shown and never trusted.
    @Test func aDenialKeepsItsEnvelope() throws {
        let document = #"{"decisions":[{"resource":"TNT","authorized":false,"error":{"details":"not entitled"}}]}"#
        let result = try CLI.run(["inspect", "--format", "jsonl", "-"], stdin: document)
        let object = try #require(try CLI.jsonLines(result.stdout).first)
        #expect(object["status"] as? String == "INVALID_TOKEN_FORMAT")
        let envelope = try #require(object["envelope"] as? [String: Any])
        #expect(envelope["resource"] as? String == "TNT")
        #expect(envelope["authorized"] as? Bool == false)
        #expect((object["reason"] as? String)?.contains("not entitled") == true)
    }
}
