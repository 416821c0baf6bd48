// libFuzzer target: user metadata (any pasted form) and signed requestor IDs:
// decode → re-encode → decode stable, encrypted values through the decryptor.
// The oracle is Sources/TokenTestSupport/MetadataOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: MetadataOracle? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzMetadataInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = MetadataOracle(keyPath: VerifyOracle.locateKeys() + "/../test-rsa2048.pem")
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetadata(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
