// libFuzzer target: any bytes through the full verifier with the samples' test
// keys and policy; every VALID_TOKEN is re-checked independently over OpenSSL.
// The oracle is Sources/TokenTestSupport/VerifyOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: VerifyOracle? = nil

/// Loads the keys before the first input, so a missing key directory stops
/// the run at once with a message instead of fuzzing with nothing trusted.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzVerifyInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = VerifyOracle(keyDirectory: VerifyOracle.locateKeys())
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVerify(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
