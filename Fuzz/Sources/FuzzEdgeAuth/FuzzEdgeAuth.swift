// libFuzzer target: Akamai EdgeAuth tokens read, written and read again, verified against the harness's own HMAC, ACLs matched, tokens issued and verified.
// The oracle is Sources/TokenTestSupport/CDNAkamaiOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: CDNAkamaiOracle? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzEdgeAuthInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = CDNAkamaiOracle()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEdgeAuth(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
