// libFuzzer target: Common Access Tokens: CBOR decode → encode → decode, COSE messages, claims against the harness's own HMAC, issued tokens.
// The oracle is Sources/TokenTestSupport/CDNCATOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: CDNCATOracle? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzCATInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = CDNCATOracle()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCAT(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
