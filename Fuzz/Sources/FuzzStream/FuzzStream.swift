// libFuzzer target: the fuzzer chooses the cut points of a token stream; fed in
// those chunks it must give exactly the records it gives fed whole.
// The oracle and the input layout are in Sources/TokenTestSupport/StreamOracle.swift.
import TokenTestSupport

nonisolated(unsafe) private let oracle = StreamOracle()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
