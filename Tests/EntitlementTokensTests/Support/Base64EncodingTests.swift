import Foundation
import Testing
import TokenTestSupport

@testable import EntitlementTokens

/// The one Base64 encoder, in both alphabets, padded and not, against RFC
/// 4648's vectors and Foundation's encoder over every length to 96 bytes.
@Suite struct Base64EncodingTests {
    @Test func rfc4648Vectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.encode(Array(plain.utf8), alphabet: .url, padded: false) == encoded.replacingOccurrences(of: "=", with: ""))
        }
    }

    @Test func everyLengthAsFoundationWritesIt() {
        var draws = SeededGenerator(seed: 4648)
        for count in 0...96 {
            for _ in 0..<8 {
                let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &draws) }
                let reference = Data(bytes).base64EncodedString()
                let url = reference.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                #expect(Base64.encode(bytes) == reference)
                #expect(Base64.encode(bytes, alphabet: .url, padded: true) == url)
                #expect(Base64.encode(bytes, alphabet: .standard, padded: false) == reference.replacingOccurrences(of: "=", with: ""))
                let canonical = url.replacingOccurrences(of: "=", with: "")
                #expect(Base64URL.encode(bytes.span) == canonical)
                #expect(Base64URL.decode(Array(canonical.utf8)) == bytes)
            }
        }
    }
}
