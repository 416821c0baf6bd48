import Testing

@testable import EntitlementTokens

/// A stream writes each verdict's JSON object straight from the verdict and
/// copies the parts that repeat from the object before (the resource and its
/// Media RSS reading, the key and the lists of checks; see `ReportFragments`).
/// Whatever it copies, every object must be byte for byte the one the
/// report alone renders (docs/DESIGN.md#output-forms).
@Suite struct StreamRenderingTests {
    static let now = TokenTimestamp(millisecondsSince1970: Minting.issued.millisecondsSince1970 + 60_000)!

    static func rss(_ channel: String, rating: String = "tv-pg") -> String {
        #"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>"#
            + channel + "</title><item><title>Dia 2</title><guid>2847811</guid><media:rating scheme=\"urn:mpaa\">"
            + rating + "</media:rating></item></channel></rss>"
    }

    /// Consecutive tokens that share what can be shared, and neighbours that
    /// differ from them in exactly one of those things.
    static func tokens() -> [String] {
        let rsa = Minting.key("test-rsa2048.pem")
        let p256 = Minting.key("test-p256.pem")
        let untrusted = Minting.key("test-ed25519.pem")  // not in the ring
        func media(_ resource: String, guid: String, requestor: String = "TNT", extra: String? = nil) -> MintRequest {
            var request = Minting.request(resource: resource)
            request.requestorID = requestor
            request.sessionGUID = guid
            if let extra { request.extraFields = [(extra, "1")] }
            return request
        }
        let mun2 = rss("mun2")
        // Twice the same document that is not usable Media RSS: one reading, one warning.
        let ambiguous = "<rss><channel><title>a</title><title>b</title></channel></rss>"
        return [
            Minting.token(media(mun2, guid: "1"), key: rsa),
            Minting.token(media(mun2, guid: "2"), key: rsa),  // the same reading, key and checks
            Minting.token(media(mun2, guid: "3"), key: p256),  // another key
            Minting.token(media(rss("caf\u{E9}"), guid: "4"), key: rsa),  // another reading
            Minting.token(media(rss("cafe\u{301}"), guid: "5"), key: rsa),  // its Unicode twin: other bytes
            Minting.token(media(rss("mun2", rating: "tv-14"), guid: "6"), key: rsa),  // differs only past the title
            Minting.token(media("bare-id", guid: "7"), key: rsa),  // no reading
            Minting.token(media("bare-id", guid: "8"), key: rsa),
            Minting.token(media(mun2, guid: "9"), key: rsa),  // back to the first
            Minting.token(media(mun2, guid: "10", requestor: "OTHER"), key: rsa),  // fails a check
            Minting.token(media(mun2, guid: "11"), key: untrusted),  // no trusted key
            Minting.token(Minting.request(.authentication), key: rsa),
            "not a token",
            Minting.token(Minting.request(.authorization, resource: mun2), key: rsa),
            Minting.token(media(ambiguous, guid: "12"), key: rsa),
            Minting.token(media(ambiguous, guid: "13"), key: rsa),
            Minting.token(media(mun2, guid: "14"), key: rsa),
            Minting.token(media(mun2, guid: "15", extra: "x"), key: rsa),  // as many fields, one path other
            Minting.token(media(mun2, guid: "16", extra: "y"), key: rsa),
            Minting.token(media(mun2, guid: "17", extra: "y"), key: rsa),
        ]
    }

    static func verifier() -> TokenVerifier {
        let now = Self.now
        return TokenVerifier(
            signature: .trustedKeys(Minting.ring("test-rsa2048.pub.pem", "test-p256.pub.pem")),
            policy: VerificationPolicy(requestorID: "TNT", clock: { now })
        )
    }

    final class Collected: @unchecked Sendable {
        var bytes: [UInt8] = []
    }

    static func streamed(_ texts: [String], format: VerificationStream.Format, jobs: Int) -> [UInt8] {
        let collected = Collected()
        let stream = VerificationStream(
            mode: .verify(verifier(), RequestExpectations()),
            format: format,
            limits: .init(jobs: jobs)
        ) { span in
            for index in span.indices { collected.bytes.append(span[index]) }
        }
        for (index, text) in texts.enumerated() {
            stream.add(TokenRecord(index: index + 1, byteOffset: 0, line: index + 1, bytes: Array(text.utf8)), source: "tokens.txt")
        }
        stream.finish()
        return collected.bytes
    }

    /// Each token's object rendered alone, from its own report.
    static func alone(_ texts: [String], showSignedBytes: Bool) -> [[UInt8]] {
        let verifier = verifier()
        return texts.enumerated().map { index, text in
            TokenReport(input: index + 1, source: "tokens.txt", line: index + 1, verdict: verifier.verify(text))
                .json(showSignedBytes: showSignedBytes)
        }
    }

    @Test(arguments: [false, true], [1, 3])
    func jsonLinesAreEachReportAlone(showSignedBytes: Bool, jobs: Int) {
        let texts = Self.tokens()
        let objects = Self.alone(texts, showSignedBytes: showSignedBytes)
        let output = Self.streamed(texts, format: .jsonl(showSignedBytes: showSignedBytes), jobs: jobs)
        let lines = output.split(separator: UInt8(ascii: "\n")).map(Array.init)
        #expect(lines.count == texts.count)
        for index in 0..<min(lines.count, objects.count) {
            #expect(lines[index] == objects[index], "token \(index + 1): \(String(decoding: lines[index], as: UTF8.self))")
        }
        // The stream did meet what it may share: a warning, another key, a Unicode twin.
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains("test-p256.pub.pem"))
        #expect(text.contains("resourceID looks like XML") || text.contains("resourceID is ambiguous"))
    }

    @Test func aJSONArrayHoldsEachReportAlone() {
        let texts = Self.tokens()
        let objects = Self.alone(texts, showSignedBytes: false)
        var expected = Array("[\n".utf8)
        expected.append(contentsOf: objects.joined(separator: Array(",\n".utf8)))
        expected.append(contentsOf: Array("\n]\n".utf8))
        #expect(Self.streamed(texts, format: .json(showSignedBytes: false), jobs: 1) == expected)
    }
}

extension StreamRenderingTests {
    /// The verdict's signature length is what the report shows as
    /// `signature.bytes` instead of decoding the text again: it must be the
    /// decoded length, or nil (then the report decodes).
    @Test func aVerdictKnowsItsSignatureLength() {
        let verifier = Self.verifier()
        var known = 0
        for text in Self.tokens() {
            let verdict = verifier.verify(text)
            guard let count = verdict.signatureByteCount else { continue }
            known += 1
            #expect(count == verdict.token?.signatureBytes?.count)
        }
        #expect(known >= 10)
    }
}
