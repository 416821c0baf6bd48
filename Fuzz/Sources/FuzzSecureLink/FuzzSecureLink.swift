// libFuzzer target: nginx secure_link tokens and secure_link_md5 expressions, against the harness's own MD5.
// The oracle is Sources/TokenTestSupport/CDNSecureLinkOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: CDNSecureLinkOracle? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzSecureLinkInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = CDNSecureLinkOracle()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSecureLink(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
