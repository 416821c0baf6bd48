import Testing
import TokenTestSupport

@testable import CDNTokens

/// The FuzzEdgeAuth oracle (TokenTestSupport's ``CDNAkamaiOracle``, the code the
/// libFuzzer target runs) over deterministic inputs: the tool's tokens, their
/// mutations, tokens re-assembled from fields, and random bytes. An oracle
/// traps on a bug, so the inputs run in an exit test.
@Suite struct EdgeAuthOracleTests {
    /// The tool's tokens, each with a few deterministic mutations, plus random
    /// text over the token's alphabet and plain random bytes.
    static func inputs() -> [[UInt8]] {
        var generator = SeededGenerator(seed: 0xA4A_3A1)
        var inputs: [[UInt8]] = EdgeAuthVector.all.map { Array($0.token.utf8) }
        for seed in inputs {
            for _ in 0..<3 {
                var mutated = seed
                let position = Int(generator.next() % UInt64(mutated.count))
                switch generator.next() % 4 {
                case 0: mutated[position] ^= UInt8(1 << (generator.next() % 7))
                case 1: mutated.remove(at: position)
                case 2: mutated.insert(Array("~!=*%".utf8)[Int(generator.next() % 5)], at: position)
                default: mutated += Array("~exp=5".utf8)
                }
                inputs.append(mutated)
            }
        }
        let alphabet = Array("ipstexpacldatmh=~!/*%2f0123456789abc".utf8)
        for _ in 0..<30 {
            inputs.append((0..<Int(generator.next() % 120)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            inputs.append((0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        }
        inputs.append(Array("st=5~exp=9~acl=/a/*!/b/%2a*~id=x~data=y~hmac=\(String(repeating: "0", count: 40))".utf8))
        inputs.append(Array("ip=203.0.113.7~exp=9~acl=/*~hmac=\(String(repeating: "1", count: 32))".utf8))
        return inputs
    }

    @Test("the oracle holds on the tool's tokens, their mutations and random input")
    func oracleHolds() async {
        #expect(Self.inputs().count > 100)
        await #expect(processExitsWith: .success) {
            let oracle = CDNAkamaiOracle()
            for input in EdgeAuthOracleTests.inputs() { oracle.check(input) }
        }
    }

    @Test("the oracle's reference matcher agrees with the library on the fixed cases")
    func referenceMatcher() {
        #expect(CDNAkamaiOracle.referenceMatch(Array("/a/*".utf8), Array("/a/b".utf8)))
        #expect(!CDNAkamaiOracle.referenceMatch(Array("/a/%2a".utf8), Array("/a/b".utf8)))
        #expect(CDNAkamaiOracle.target == "FuzzEdgeAuth")
    }
}
