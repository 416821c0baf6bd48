// libFuzzer target: every token date shape; what parses must format back and
// re-parse to the same instant. The oracle is Sources/TokenTestSupport/DateOracle.swift.
import TokenTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDates(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    DateOracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
