// libFuzzer target: the one reading of a request path, against RFC 3986 remove_dot_segments.
// The oracle is Sources/TokenTestSupport/RequestPathOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private var oracle: RequestPathOracle? = nil

@_cdecl("LLVMFuzzerInitialize")
public func fuzzRequestPathInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    oracle = RequestPathOracle()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestPath(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let oracle else { setupFailure("LLVMFuzzerInitialize did not run") }
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
