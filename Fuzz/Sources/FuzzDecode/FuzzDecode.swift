// libFuzzer target: any bytes through transport decoding, framing and parsing.
// The oracle is Sources/TokenTestSupport/DecodeOracle.swift. No main.swift: libFuzzer's main runs.
import TokenTestSupport

nonisolated(unsafe) private let oracle = DecodeOracle()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
