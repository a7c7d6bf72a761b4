import FuzzSupport
@_spi(Fuzzing) import ImageCodec

// The WebP header probe (the container scan and libwebp's feature read): any bytes, a typed error or a header, never a crash, leak or hang, nor a read that
// allocates more than its bound (a trap in boundedHeader).
@_cdecl("webp_header_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        _ = FuzzingEntryPoints.boundedHeader(bytes(data, size))
        return 0
    }
}
