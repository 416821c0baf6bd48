import CDNTokens
import Foundation
import Testing
import TokenTestSupport

/// The FuzzCloudFront oracle (the code the libFuzzer target runs) over the
/// botocore vectors, their mutations and deterministic random inputs. The
/// oracle traps on a property that fails, so it runs in an exit test.
@Suite("CloudFront fuzz oracle")
struct CloudFrontOracleTests {
    @Test("the oracle holds over seeds, mutations and random inputs")
    func oracleHolds() async {
        await #expect(processExitsWith: .success) {
            let oracle = CDNCloudFrontOracle(keyPath: CloudFrontFixtures.rsaKeyPath)
            for input in CloudFrontOracleTests.inputs() { oracle.check(input) }
        }
    }

    @Test("the inputs reach every door of the oracle")
    func inputsReachTheReaders() {
        let inputs = Self.inputs()
        #expect(inputs.count > 60)
        #expect(inputs.contains { (try? CloudFrontSignedURL(CDNURL(parsing: String(decoding: $0, as: UTF8.self)))) != nil })
        #expect(inputs.contains { (try? CloudFrontPolicy(json: $0)) != nil })
        #expect(inputs.contains { String(decoding: $0, as: UTF8.self).hasPrefix("CloudFront-") })
    }

    /// Seeds from the vectors, each mutated a few ways, plus random bytes and patterns.
    static func inputs() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for vector in CloudFrontFixtures.vectors {
            seeds.append(Array(vector.signedURL.utf8))
            seeds.append(Array(vector.url.utf8))
            seeds.append(Array(vector.policy.utf8))
            seeds.append(Array(vector.cookies.map { "\($0[0])=\($0[1])" }.joined(separator: "; ").utf8))
        }
        seeds += [
            "203.0.113.7/32", "2001:db8::/32", "2001:db8::7", "::ffff:192.0.2.1", "https://h/a*b?c\nhttps://h/aXXbYc",
            "*a*a*a*b\naaaaaaaaaaaaaaaa", "*a*a*\na", "*ab*ab*\nabab", "https://h.example/a\"b/c.ts", "https://h.example/c.ts?Expires=1",
            "https://h.example/?", "eyJTdGF0ZW1lbnQiOltdfQ__",
        ].map { Array($0.utf8) }
        var random = SeededGenerator(seed: 0x0C10_0DF0)
        var inputs = seeds
        for seed in seeds {
            for _ in 0..<2 {
                var mutated = seed
                switch random.below(3) {
                case 0 where !mutated.isEmpty: mutated[random.below(mutated.count)] = UInt8(random.below(256))
                case 1 where !mutated.isEmpty: mutated.removeSubrange(random.below(mutated.count)...)
                default: mutated.insert(Array("*?&=_~-".utf8)[random.below(7)], at: random.below(mutated.count + 1))
                }
                inputs.append(mutated)
            }
        }
        for _ in 0..<24 {
            inputs.append((0..<random.below(80)).map { _ in UInt8(random.below(256)) })
        }
        // Wildcard patterns and URLs over a small alphabet, where matches are common.
        let alphabet = Array("ab?*".utf8)
        for _ in 0..<200 {
            let pattern = (0..<random.below(10)).map { _ in alphabet[random.below(4)] }
            let text = (0..<random.below(12)).map { _ in alphabet[random.below(2)] }
            inputs.append(pattern + [0x0A] + text)
        }
        return inputs
    }
}
