// libFuzzer target: software statements (JWS compact) and their claims, decoded,
// re-encoded, verified against the samples' test keys, and minted.
// The oracle is Sources/TokenTestSupport/JWSOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: JWSOracle? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzJWSInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = JWSOracle(keyDirectory: VerifyOracle.locateKeys())
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
