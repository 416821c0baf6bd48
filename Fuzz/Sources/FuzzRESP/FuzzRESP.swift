// libFuzzer target: the RESP2 reply decoder of EntitlementTokensRedis, fed in
// the chunks the input names. The oracle is Sources/TokenTestSupport/RESPOracle.swift.
import TokenTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    RESPOracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
