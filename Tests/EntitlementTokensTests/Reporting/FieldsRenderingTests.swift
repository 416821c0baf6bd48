import Foundation
import Testing

@testable import EntitlementTokens

/// The `fields` object of the JSON output (docs/DESIGN.md#output-forms): every path once, a
/// repeated one as an array, keys and values with their own bytes, and a cost
/// linear in the number of fields (docs/DESIGN.md#limits-of-the-decoder).
@Suite struct FieldsRenderingTests {
    static let signature = "dGVzdC1zaWduYXR1cmUtYnl0ZXMtdGhhdC1hcmUtbm90LXZlcmlmaWVkLWhlcmU="

    static func token(resource: String = "TNT", extra: String = "") -> String {
        "<signatureInfo>\(signature)<signatureInfo><authToken><requestorID>TNT</requestorID><resourceID>\(resource)</resourceID>"
            + "<ttl>420000</ttl><issueTime>2026-01-15T12:00:00Z</issueTime><mvpdId>Comcast_SSO</mvpdId>\(extra)</authToken>"
    }

    static func rendered(_ texts: [String]) throws -> [UInt8] {
        let decoder = TokenDecoder()
        var json = JSONWriter()
        for (index, text) in texts.enumerated() {
            let report = TokenReport(input: index + 1, source: "-", line: index + 1, decoded: .success(try decoder.decode(text)))
            report.write(to: &json, showSignedBytes: false)
            json.raw("\n")
        }
        return json.bytes
    }

    @Test func repeatedPathsBecomeArraysAndUnicodeTwinsStayApart() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let extra = "<list><v>1</v><v>2</v></list><\(composed)>A</\(composed)><\(decomposed)>B</\(decomposed)><list><v>3</v></list>"
        let output = try Self.rendered([Self.token(extra: extra)])
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains(#""list/v":["1","2","3"]"#))
        #expect(output.contains(subsequence: Array("\"\(composed)\":\"A\"".utf8)))
        #expect(output.contains(subsequence: Array("\"\(decomposed)\":\"B\"".utf8)))
    }

    /// The writer reuses a value written for the token before; a canonically
    /// equivalent value is not the same value, and keeps its own bytes.
    @Test func aValueKeepsItsOwnBytesAfterItsUnicodeTwin() throws {
        let composed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        let output = try Self.rendered([Self.token(resource: composed), Self.token(resource: decomposed)])
        let lines = output.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == 2)
        #expect(Array(lines[0]).contains(subsequence: Array("\"resourceID\":\"\(composed)\"".utf8)))
        #expect(Array(lines[1]).contains(subsequence: Array("\"resourceID\":\"\(decomposed)\"".utf8)))
    }

    /// Verifying and rendering (as `verify --format jsonl` does) a token with
    /// 512 attributes costs at most 8 times one with 128: linear, with room
    /// for noise; growth with the square of the count would make it 16 times.
    /// Pairwise grouping made a token with 6,000 attributes cost 2,500 times a
    /// plain one. (The library's AttributeLimitTests also hold a token with 512
    /// attributes to 20 times a plain one, end to end.)
    @Test(.serialized, arguments: [false, true])
    func verifyingAndRenderingStaysLinearInFields(pathsRepeat: Bool) throws {
        let signing = Minting.key("test-rsa2048.pem")
        let ring = Minting.ring("test-rsa2048.pub.pem")
        let now = try TokenDateParser.parse("2026-01-15T12:01:00Z").timestamp
        let verifier = TokenVerifier(
            signature: .trustedKeys(ring),
            policy: VerificationPolicy(requestorID: "TNT", allowedMVPDs: ["Comcast_SSO"], clock: { now })
        )
        func signed(attributes: Int) throws -> String {
            let extra = stride(from: 0, to: attributes, by: 64).enumerated().map { element, _ in
                "<x\(pathsRepeat ? "" : String(element))" + (0..<64).map { #" a\#($0)="""# }.joined() + "/>"
            }.joined()
            let text = Self.token(extra: extra)
            let element = String(text[text.range(of: "<authToken>")!.lowerBound...])
            return "<signatureInfo>\(Data(try signing.signature(for: Array(element.utf8))).base64EncodedString())<signatureInfo>\(element)"
        }
        let small = try signed(attributes: 128)
        let large = try signed(attributes: 512)
        var json = JSONWriter()
        func run(_ text: String) -> VerificationStatus {
            let verdict = verifier.verify(text, expecting: RequestExpectations(resourceID: "TNT"))
            TokenReport(input: 1, source: "-", line: 1, verdict: verdict).write(to: &json, showSignedBytes: false)
            json = JSONWriter()
            return verdict.status
        }
        #expect(run(small) == .validToken)
        #expect(run(large) == .validToken)
        // Every one of the 512 values is rendered, grouped or not.
        let values = try Self.rendered([large]).split(separator: UInt8(ascii: "\""), omittingEmptySubsequences: false)
        #expect(values.count(where: \.isEmpty) >= 512)
        // CPU time of this thread: tests run in parallel on few cores, and
        // wall time would count the time other tests had the core.
        func threadSeconds() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
        func seconds(_ text: String, _ times: Int) -> Double {
            let start = threadSeconds()
            for _ in 0..<times { _ = run(text) }
            return (threadSeconds() - start) / Double(times)
        }
        // The median of many short back-to-back pairs.
        let ratios = (0..<21).map { _ in seconds(large, 4) / seconds(small, 16) }.sorted()
        let ratio = ratios[ratios.count / 2]
        #expect(ratio < 8, "4 times the attributes cost \(ratio) times as much")
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
