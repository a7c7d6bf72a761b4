import FuzzSupport
@_spi(Fuzzing) import ImageCodec

// The HEIC and AVIF header probe (the container walk, then libheif's or libavif's parse): any
// bytes, a typed error or a header, never a crash, leak or hang.
@_cdecl("heif_header_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        _ = FuzzingEntryPoints.boundedHeader(bytes(data, size))
        return 0
    }
}
