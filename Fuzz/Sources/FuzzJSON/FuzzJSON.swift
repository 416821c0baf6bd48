// libFuzzer target: REST JSON documents through the record splitter's
// streaming scanner, against Foundation's JSONSerialization as a reference,
// fed whole and in the chunks the fuzzer chooses.
// The oracle and the input layout are in Sources/TokenTestSupport/JSONOracle.swift.
import TokenTestSupport

nonisolated(unsafe) private let oracle = JSONOracle()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    oracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
