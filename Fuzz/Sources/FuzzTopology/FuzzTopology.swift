// libFuzzer target: the readings of the replies that say where a replay store
// writes (sentinel address, ROLE, MOVED/ASK, CLUSTER SLOTS/SHARDS), over
// RESP2 replies decoded from the input. The oracle is
// Sources/TokenTestSupport/TopologyOracle.swift.
import TokenTestSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTopology(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    TopologyOracle.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
