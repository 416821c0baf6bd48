import Testing
import TokenTestSupport

@testable import CDNTokens

/// The FuzzSecureLink oracle (TokenTestSupport's ``CDNSecureLinkOracle``) over
/// deterministic inputs: expressions, `md5&expires` pairs, and random bytes.
@Suite struct SecureLinkOracleTests {
    static func inputs() -> [[UInt8]] {
        var generator = SeededGenerator(seed: 0x5EC_11E)
        var inputs: [[UInt8]] = SecureLinkKnownAnswerTests.vectors.flatMap { vector in
            [Array(vector.expression.utf8), Array("\(vector.md5)&\(vector.expires)".utf8)]
        }
        for seed in inputs {
            var mutated = seed
            mutated[Int(generator.next() % UInt64(mutated.count))] ^= 0x01
            inputs.append(mutated)
        }
        let alphabet = Array("${}secure_link_expiresurifolderremote_addr: /-Aa09&".utf8)
        for _ in 0..<40 {
            inputs.append((0..<Int(generator.next() % 80)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            inputs.append((0..<Int(generator.next() % 70)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        }
        inputs.append(Array("AAAAAAAAAAAAAAAAAAAAAA&9223372036854775807".utf8))
        return inputs
    }

    @Test("the oracle holds on the vectors, their mutations and random input")
    func oracleHolds() async {
        #expect(Self.inputs().count > 80)
        await #expect(processExitsWith: .success) {
            let oracle = CDNSecureLinkOracle()
            for input in SecureLinkOracleTests.inputs() { oracle.check(input) }
        }
    }
}
