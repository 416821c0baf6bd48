import Foundation
import IntegrationSupport
import Testing

@testable import EntitlementTokens

/// Shared helpers for the Signature tests: fixture keys, temporary files, and
/// the `openssl` command line used as an independent implementation.
enum SignatureFixtures {
    /// `Fixtures/Keys` of this test target, one folder up from this file's. Found through
    /// `#filePath` so the tests need no resource bundle and run the same from any working directory.
    static let keysDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Keys", isDirectory: true)

    static func path(_ name: String) -> String {
        keysDirectory.appendingPathComponent(name).path
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: keysDirectory.appendingPathComponent(name)))
    }

    /// The single key in fixture `name`.
    static func publicKey(_ name: String, options: KeyLoadingOptions = .init()) throws -> PublicKey {
        let keys = try PublicKey.keys(from: bytes(name), source: path(name), options: options)
        try #require(keys.count == 1)
        return keys[0]
    }

    static func signingKey(_ name: String, options: KeyLoadingOptions = .init()) throws -> SigningKey {
        try SigningKey(bytes: bytes(name), source: path(name), options: options)
    }

    /// A message shaped like a real short media token element, about 600 bytes.
    static let tokenMessage: [UInt8] = {
        var text =
            "<authToken><sessionGUID>2d6c1e3a-1f8b-4c6e-9a6f-0c5d3b1e9f21</sessionGUID>"
            + "<requestorID>TestRequestor</requestorID>"
            + "<resourceID><![CDATA[<rss version=\"2.0\" xmlns:media=\"http://search.yahoo.com/mrss/\">"
            + "<channel><title>TestChannel</title><item><title>Episode 1</title><guid>2847811</guid>"
            + "<media:rating scheme=\"urn:mpaa\">tv-pg</media:rating></item></channel></rss>]]></resourceID>"
            + "<ttl>420000</ttl><issueTime>2016-03-17 15:01:31 -0700</issueTime><mvpdId>TestMVPD</mvpdId>"
        while text.utf8.count < 588 { text += "<x>padding</x>" }
        return Array((text + "</authToken>").utf8)
    }()

    /// A fresh empty directory, removed by the caller with `removeTemporary`.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("tokeninspect-signature-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func removeTemporary(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }

    static func write(_ bytes: [UInt8], to url: URL) throws {
        try Data(bytes).write(to: url)
    }

    struct CommandResult {
        var status: Int32
        var output: [UInt8]
        var errorText: String
    }

    /// Runs `openssl ARGS…` (found on PATH) and waits for it. The tests
    /// require the CLI: it is the independent implementation the library is
    /// cross-checked against, and it is installed with libssl-dev's `openssl`.
    static func openssl(_ arguments: [String]) throws -> CommandResult {
        let finished = try Subprocess.run("/usr/bin/env", ["openssl"] + arguments, separateErrors: true)
        return CommandResult(status: finished.status, output: finished.output, errorText: finished.errorText)
    }

    /// Raw `r‖s` (32 + 32 bytes) from a DER ECDSA signature; test-side parser,
    /// independent of the library's encoder.
    static func rawECDSA(fromDER der: [UInt8]) throws -> [UInt8] {
        try #require(der.count >= 8 && der[0] == 0x30 && Int(der[1]) == der.count - 2)
        var index = 2
        var raw: [UInt8] = []
        for _ in 0..<2 {
            try #require(der[index] == 0x02)
            let length = Int(der[index + 1])
            var integer = Array(der[(index + 2)..<(index + 2 + length)])
            while integer.count > 32 && integer.first == 0 { integer.removeFirst() }
            try #require(integer.count <= 32)
            raw += [UInt8](repeating: 0, count: 32 - integer.count) + integer
            index += 2 + length
        }
        try #require(index == der.count)
        return raw
    }
}

@Suite("Signature fixtures")
struct SignatureFixturesTests {
    /// Every fixture key is documented as test-only in the README beside it,
    /// so nobody mistakes one for a real key.
    @Test func everyFixtureIsListedInTheReadme() throws {
        let readme = String(decoding: try SignatureFixtures.bytes("README.md"), as: UTF8.self)
        #expect(readme.localizedCaseInsensitiveContains("test only") || readme.localizedCaseInsensitiveContains("test-only"))
        let names = try FileManager.default.contentsOfDirectory(atPath: SignatureFixtures.keysDirectory.path)
            .filter { $0.hasPrefix("test-") }
        #expect(names.count >= 20)
        for name in names {
            #expect(readme.contains(name), "README.md does not list \(name)")
        }
    }

    @Test func tokenMessageIsAboutSixHundredBytes() {
        #expect((590...620).contains(SignatureFixtures.tokenMessage.count))
    }
}
