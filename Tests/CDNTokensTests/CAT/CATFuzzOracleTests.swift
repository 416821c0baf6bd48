import Testing
import TokenTestSupport

@testable import CDNTokens

@Suite("FuzzCAT oracle")
struct CATFuzzOracleTests {
    /// Deterministic inputs: issued tokens, their mutations, CBOR fragments and random bytes.
    static func inputs() throws -> [[UInt8]] {
        var generator = SeededGenerator(seed: 0xCA7)
        let key = try CATFixtures.hmacKey()
        var inputs: [[UInt8]] = [[], [0xA0], [0xD1, 0x84, 0x40, 0xA0, 0x41, 0xA0, 0x40], [0x9F, 0xFF], [0x81, 0x81, 0x81, 0x00]]
        for index in 0..<8 {
            let parameters = CDNIssueParameters(
                url: CATFixtures.url("https://cdn.example.com/p\(index)/a.ts"),
                scope: index % 2 == 0 ? .folder : .url,
                now: 1_768_478_400,
                lifetime: 600,
                clientIP: index % 3 == 0 ? "192.0.2.\(index)" : nil
            )
            let message = try CommonAccessTokenIssuer.message(parameters, issuer: "fuzz-issuer", key: key, cti: [UInt8(index)])
            let bytes = message.cbor()
            inputs.append(bytes)
            inputs.append(Array(try CommonAccessTokenIssuer.issue(parameters, issuer: "i", key: key, cti: [1]).utf8))
            for _ in 0..<3 {
                var mutated = bytes
                mutated[Int(generator.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: generator.next())
                inputs.append(mutated)
            }
            inputs.append(Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count)))))
        }
        for _ in 0..<24 {
            inputs.append((0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        }
        for vector in CATKnownAnswerTests.peer { inputs.append(Array((vector["token"] as! String).utf8)) }
        return inputs
    }

    @Test("the oracle holds over issued, mutated and random inputs")
    func oracle() throws {
        let oracle = CDNCATOracle()
        let inputs = try Self.inputs()
        #expect(inputs.count >= 60)
        for input in inputs { oracle.check(input) }
    }
}
