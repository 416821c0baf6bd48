// libFuzzer target: CloudFront signed URLs, cookies, policies, Base64, IP ranges and Resource patterns, issued and verified.
// The oracle is Sources/TokenTestSupport/CDNCloudFrontOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: CDNCloudFrontOracle? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzCloudFrontInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = CDNCloudFrontOracle(keyPath: VerifyOracle.locateKeys() + "/../test-rsa2048.pem")
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCloudFront(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
