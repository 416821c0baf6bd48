// libFuzzer target: an MPD read and rewritten for a viewer, against the strip oracle.
// The oracle is Sources/TokenTestSupport/DASHManifestOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: DASHManifestOracle? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzDASHInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = DASHManifestOracle()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDASH(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
